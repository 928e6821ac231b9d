"""The project's own documentation site and its generated reference pages."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT


def test_reference_pages_cover_every_kind_rule_and_command(tmp_path):
    from ledger.checks.registry import all_rules
    from ledger.cli.main import SUBCOMMANDS
    from ledger.cli.reference import cli_page
    from ledger.schema.registry import KINDS
    from ledger.site.reference import write_reference

    kinds, rules, cli = (p.read_text() for p in write_reference(tmp_path, cli_page()))
    assert all(f"\n## {kind}\n" in kinds for kind in KINDS)
    assert all(f"\n## {rule}\n" in rules for rule in all_rules())
    assert all(f"\n## ledger {name}\n" in cli for name in SUBCOMMANDS)
    assert "\n## ledger site build\n" in cli and "--strict" in cli
    # The committed pages are what the code writes: a rule or kind changed without
    # `ledger site reference` would publish yesterday's documentation. (cli.md follows
    # click's help layout, which differs between a terminal and this process.)
    for name, text in (("kinds.md", kinds), ("rules.md", rules)):
        assert (ROOT / "docs" / "reference" / name).read_text() == text, f"run `ledger site reference`: {name} is stale"


@pytest.mark.slow
def test_project_docs_site_builds_strict(own_site):
    # The run's one strict build of this repository's site (tests/site/conftest.py: own_site,
    # through the real `ledger site build --strict`; the browser walk reads the same build).
    for page in ("index.html", "guide/site.html", "reference/kinds.html", "evidence/index.html"):
        assert (own_site / "site" / page).is_file(), page


def test_the_publishing_recipe_is_the_workflow_this_repository_runs():
    """docs/guide/site.md's GitHub Pages recipe is .github/workflows/pages.yml verbatim, and
    it uploads the folder it builds."""
    workflow = (ROOT / ".github" / "workflows" / "pages.yml").read_text(encoding="utf-8")
    guide = (ROOT / "docs" / "guide" / "site.md").read_text(encoding="utf-8")
    assert f"```yaml\n{workflow}```" in guide
    assert "ledger site build --strict --out _site" in workflow and "path: _site" in workflow
