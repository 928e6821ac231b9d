"""Check the links of the built HTML: raw HTML that MkDocs does not validate (spec bodies,
anchors in listings), and anything that would make the site request another host.

Every `href`/`src` of every page is resolved against the site folder; a relative link
must reach a file (or a folder's index.html), and its `#anchor` an `id` on that page. A
`src` or stylesheet pointing off the site is a network request the site must not make.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..errors import Problem

_ATTR = re.compile(r"<(a|img|link|script|source|iframe|embed|object|image|use)\b([^>]*)>", re.IGNORECASE)
_HREF = re.compile(r"""\b(href|src|xlink:href|data)\s*=\s*("([^"]*)"|'([^']*)')""", re.IGNORECASE)
#: `id=` or `name=` (any case); the word boundary before it is checked in `_ids`, since a
#: pattern that starts with `\b` cannot be searched for by its first letters (a third slower).
_ID = re.compile(r"""(?:[iI][dD]|[nN][aA][mM][eE])\s*=\s*("([^"]*)"|'([^']*)')""")


def _ids(path: Path, cache: dict[Path, set[str]]) -> set[str]:
    if path not in cache:
        text = path.read_text(encoding="utf-8", errors="replace")
        found = set()
        for m in _ID.finditer(text):
            start = m.start()
            if start and (text[start - 1].isalnum() or text[start - 1] == "_"):
                continue  # `grid=`, `data-name=`'s `name` is fine: `-` is no word character
            found.add(m.group(2) if m.group(2) is not None else m.group(3))
        cache[path] = found
    return cache[path]


def _target(site: Path, page: Path, path: str, found: dict[str, Path | None]) -> Path | None:
    base = page.parent
    if path.startswith("/"):
        candidate = site / path.lstrip("/")
    else:
        candidate = base / path
    name = posixpath.normpath(str(candidate))
    # Every page links to the same navigation and assets: each target is looked up once.
    if name not in found:
        resolved = Path(name)
        if resolved.is_dir():
            resolved = resolved / "index.html"
        found[name] = resolved if resolved.is_file() else None
    return found[name]


def check(site: Path, *, request_only: bool = False) -> list[Problem]:
    problems: list[Problem] = []
    cache: dict[Path, set[str]] = {}
    found: dict[str, Path | None] = {}
    site = site.resolve()
    for page in sorted(site.rglob("*.html")):
        rel = page.relative_to(site).as_posix()
        text = page.read_text(encoding="utf-8", errors="replace")
        for tag_match in _ATTR.finditer(text):
            tag = tag_match.group(1).lower()
            attrs = tag_match.group(2)
            is_stylesheet = tag == "link" and re.search(
                r"rel\s*=\s*[\"']?[^\"'>]*(stylesheet|preload|prefetch|icon|manifest|modulepreload)",
                attrs,
                re.IGNORECASE,
            )
            for m in _HREF.finditer(attrs):
                attr = m.group(1).lower()
                value = m.group(3) if m.group(3) is not None else m.group(4)
                value = value.replace("&amp;", "&")
                parts = urlsplit(value)
                loads = attr != "href" or bool(is_stylesheet)
                if parts.scheme.lower() in ("javascript", "vbscript", "data") and not (
                    parts.scheme.lower() == "data" and tag == "img" or tag == "link"
                ):
                    problems.append(
                        Problem(
                            rel,
                            f"<{tag} {attr}>",
                            f"{parts.scheme}: URL {value[:60]!r}",
                            "user text must never become a live link",
                        )
                    )
                    continue
                if parts.scheme or parts.netloc:
                    if loads and parts.scheme.lower() != "data":
                        problems.append(
                            Problem(
                                rel,
                                f"<{tag} {attr}>",
                                f"loads {value[:80]!r} from another host",
                                "the site must make no request off its own host",
                            )
                        )
                    continue
                if request_only or not parts.path and not parts.fragment:
                    continue
                if parts.path:
                    target = _target(site, page, unquote(parts.path), found)
                    if target is None:
                        problems.append(
                            Problem(
                                rel,
                                f"<{tag} {attr}>",
                                f"links to {value!r}, which is not in the built site",
                                "fix the link or the page it points at",
                            )
                        )
                        continue
                else:
                    target = page
                if parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in _ids(target, cache):
                    problems.append(
                        Problem(
                            rel,
                            f"<{tag} {attr}>",
                            f"links to {value!r}, but that page has no anchor {parts.fragment!r}",
                            "fix the anchor",
                        )
                    )
    return problems
