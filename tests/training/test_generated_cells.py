"""Generated pages pass the rules user pages must pass (issue 28 item 11): ledger's own decision
index failed `ledger site build --strict` on a "Tried since" cell of 238 characters made of
three record ids with their mechanisms."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli


def added(repo: Path, kind: str, body: dict) -> str:
    result = cli(repo, "add", kind, "-", input=json.dumps(body))
    assert result.returncode == 0, result.stderr
    return result.stdout.split()[0]


def _pages(repo: Path, limit: int | None = None):
    from ledger.analysis.guidance import build_guidance
    from ledger.checks.registry import configure
    from ledger.site import decisions, page_rules
    from ledger.site.context import SiteData
    from ledger.site.templating import environment
    from ledger.store import Ledger

    records = Ledger.open(repo).records()
    data = SiteData.build("t", records, [])
    data.guidance = build_guidance(records)
    rules = {"cell-width": {"max_chars": limit}} if limit else {}
    if limit:
        data.cell_limit = limit
    (page,) = decisions.render(data, environment())
    return page, page_rules.check_texts([(page.path, page.text)], configure(rules), {})


def test_tried_since_fits_the_cell_width(repo: Path) -> None:
    family = "raw velocity, max-autotune, attention compile flag"
    added(repo, "decision", {"family": family, "verdict": "rejected"})
    for n in range(4):
        added(
            repo,
            "measurement",
            {
                "median": 0.4 + n / 1000,
                "family": family,
                "mechanism": f"mechanism {n}: coordinate-descent tuning of every Inductor pointwise kernel",
            },
        )
    page, problems = _pages(repo)
    assert problems == [], problems
    row = next(line for line in page.text.splitlines() if line.startswith("| raw velocity"))
    assert "new mechanism: mechanism 0" in row and "more" in row
    # A stricter ledger.yaml (max_chars 120) is fitted too.
    page, problems = _pages(repo, 120)
    assert problems == [], problems
