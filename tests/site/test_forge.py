"""`site.forge` makes issue and pull-request numbers links to the repository's forge; without it
they stay text, and an address that is not plain https is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import cli

from tests.site.conftest import Campaign


def campaign_with_links(root: Path, forge: str | None, style: str | None = None) -> tuple[Campaign, dict[str, str]]:
    c = Campaign(root)
    if forge:
        config = root / "ledger.yaml"
        extra = f"  forge: {forge}\n" + (f"  forge_style: {style}\n" if style else "")
        config.write_text(config.read_text().replace("  forge:\n", extra, 1))
        from ledger.store import Ledger

        c.ledger = Ledger.open(root)
    ids = {
        "m": c.add(
            "measurement", 1, {"samples": [1.0, 1.01], "links": {"pr": 1630, "issue": 1044, "closed_prs": [1618]}}
        ),
        "issue": c.add("issue", 2, {"number": 1045, "title": "settle residency"}),
    }
    # Cited, so the measurement has a page of its own.
    c.add("decision", 3, {"family": "packed projections", "verdict": "accepted", "evidence": [ids["m"]]})
    return c, ids


def page_of(docs: Path, kind: str, record_id: str) -> str:
    return (docs / f"records/{kind}/{record_id}.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("forge", "style", "pull", "issue"),
    [
        ("https://github.com/FastVideo/FastVideo", None, "/pull/1630", "/issues/1044"),
        ("https://gitlab.com/group/sub/project/", None, "/-/merge_requests/1630", "/-/issues/1044"),
        ("https://git.example.org/team/repo", "gitea", "/pulls/1630", "/issues/1044"),
    ],
)
def test_numbers_link_to_the_forge(tmp_path: Path, forge, style, pull, issue) -> None:
    from ledger.site import generate

    c, ids = campaign_with_links(tmp_path / "campaign", forge, style)
    _, _, docs = generate(c.ledger)
    base = forge.rstrip("/")
    measurement = page_of(docs, "measurement", ids["m"])
    assert f"[\\#1630]({base}{pull})" in measurement
    assert f"[\\#1044]({base}{issue})" in measurement
    # A pull request closed in favour of this one links too, and says what superseded it.
    assert f"[\\#1618]({base}{pull.replace('1630', '1618')}) \\(superseded by #1630\\)" in measurement
    assert f"[\\#1045]({base}{issue.replace('1044', '1045')})" in page_of(docs, "issue", ids["issue"])


def test_without_a_forge_numbers_stay_text(tmp_path: Path) -> None:
    from ledger.site import generate

    c, ids = campaign_with_links(tmp_path / "campaign", None)
    _, _, docs = generate(c.ledger)
    measurement = page_of(docs, "measurement", ids["m"])
    assert "\\#1630" in measurement and "/pull/" not in measurement


@pytest.mark.parametrize(
    "forge",
    ["javascript:alert(1)", "http://github.com/org/repo", "https://github.com/org/repo?x=1", "https://u:p@host/r"],
)
def test_a_forge_that_is_not_plain_https_is_refused(tmp_path: Path, forge: str) -> None:
    root = tmp_path / "campaign"
    Campaign(root)
    config = root / "ledger.yaml"
    config.write_text(config.read_text().replace("  forge:\n", f"  forge: '{forge}'\n", 1))
    result = cli(root, "check", "--all")
    assert result.returncode == 2, result.stdout + result.stderr
    assert (
        "ledger.yaml" in result.stderr and "site.forge" in result.stderr and "https://HOST/OWNER/REPO" in result.stderr
    )
