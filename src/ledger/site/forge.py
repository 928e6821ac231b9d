"""Issue and pull-request numbers as links to the forge the repository lives on.

`site.forge` in ledger.yaml names the repository's web address (`https://github.com/org/repo`,
`https://gitlab.com/group/project`, `https://codeberg.org/org/repo`); the forge's own URL
scheme for issues and pull requests follows from its host, or from `site.forge_style` for a
self-hosted one. Without it, numbers stay plain text: ledger never guesses where they point.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

#: style -> (issue path, pull-request path) under the repository's address.
PATHS = {
    "github": ("issues/{n}", "pull/{n}"),
    "gitlab": ("-/issues/{n}", "-/merge_requests/{n}"),
    "gitea": ("issues/{n}", "pulls/{n}"),  # Gitea, Forgejo, Codeberg
}
STYLES = tuple(PATHS)


def style_of(host: str) -> str:
    host = host.lower()
    if "gitlab" in host:
        return "gitlab"
    if host in ("codeberg.org",) or "gitea" in host or "forgejo" in host:
        return "gitea"
    return "github"


@dataclass(frozen=True)
class Forge:
    url: str  # https://host/path, no trailing slash (config.SiteSettings checked it)
    style: str

    def issue(self, number: int) -> str:
        return f"{self.url}/{PATHS[self.style][0].format(n=quote(str(int(number))))}"

    def pull(self, number: int) -> str:
        return f"{self.url}/{PATHS[self.style][1].format(n=quote(str(int(number))))}"


def forge_of(url: str | None, style: str | None = None) -> Forge | None:
    if not url:
        return None
    base = url.rstrip("/")
    host = base.split("://", 1)[1].split("/", 1)[0]
    return Forge(base, style or style_of(host))
