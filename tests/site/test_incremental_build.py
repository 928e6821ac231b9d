"""A build that reuses what earlier builds remembered (`site.build_cache`, `site.mkdocs_cache`)
writes the same site, file for file and byte for byte, as a cold build of the same ledger
with nothing remembered: after pushes of records, a correction, a superseded decision, a
changed spec page, a changed ledger.yaml, a changed mkdocs.yml and a new template. Real
builds with MkDocs; the cold build is the same code with the cache files moved away (and put
back afterwards, so the next step's warm build starts from what the warm builds made)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledger.config import inside
from ledger.site.builder import _lock_path, build_site
from ledger.site.owned import MANIFEST
from ledger.store.ledger import Ledger


def _tree(folder: Path) -> dict[str, bytes]:
    # The manifest records each file's inode and time on this machine: not part of the site.
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }


def _caches(root: Path) -> list[Path]:
    ledger = Ledger.open(root)
    docs = inside(ledger.root, ledger.config.site.docs_dir, "site.docs_dir")
    lock = _lock_path(docs)
    return [lock.with_suffix(".rules-cache"), lock.with_suffix(".mkdocs-cache"), lock.with_suffix(".chart-cache")]


def _warm_and_cold(root: Path, tmp: Path, step: str, repository_code: bool = False):
    warm = build_site(Ledger.open(root), out=tmp / "warm", strict=False, repository_code=repository_code)
    kept = {p: p.read_bytes() for p in _caches(root) if p.is_file()}
    for p in kept:
        p.unlink()
    try:
        cold = build_site(Ledger.open(root), out=tmp / f"cold-{step}", strict=False, repository_code=repository_code)
    finally:
        for p, data in kept.items():
            p.write_bytes(data)
    assert cold.mkdocs_cached == 0 and cold.rules_cached == 0 and cold.charts_cached == 0
    a, b = _tree(tmp / "warm"), _tree(tmp / f"cold-{step}")
    assert sorted(a) == sorted(b), (step, sorted(set(a) ^ set(b))[:10])
    differ = [name for name in a if a[name] != b[name]]
    assert not differ, (step, differ[:10])
    assert [p.as_dict() for p in warm.warnings] == [p.as_dict() for p in cold.warnings], step
    return warm


@pytest.mark.slow
def test_a_remembering_build_is_byte_identical_to_a_cold_one(campaign, tmp_path) -> None:
    root = campaign.root
    first = build_site(Ledger.open(root), out=tmp_path / "warm", strict=False)
    assert first.pages > 10
    ledger = Ledger.open(root)
    contract = next(iter(ledger.records("contract"))).id
    decision = next(iter(ledger.records("decision"))).id

    # A push of measurements and a decision citing one of them.
    new = [
        campaign.add("measurement", 3000 + n, {"contract": contract, "samples": [0.71 + n / 1000, 0.712, 0.713]})
        for n in range(4)
    ]
    campaign.add(
        "decision",
        3010,
        {"family": "overlap", "verdict": "accepted", "mechanism": "measured", "evidence": [new[0]]},
    )
    warm = _warm_and_cold(root, tmp_path, "push")
    assert warm.mkdocs_cached > 0 and warm.rules_cached > 0  # it did remember something

    # A correction: a measurement that supersedes one of the push, and a decision superseded.
    campaign.add(
        "measurement",
        3020,
        {"contract": contract, "samples": [0.7101, 0.7102, 0.7103], "supersedes": [new[1]]},
    )
    campaign.add(
        "decision",
        3030,
        {
            "family": "overlap",
            "verdict": "rejected",
            "mechanism": "re-measured",
            "evidence": [new[2]],
            "supersedes": [decision],
        },
    )
    _warm_and_cold(root, tmp_path, "correction")

    # A changed spec page.
    spec = next(Ledger.open(root).specs_dir.glob("*.md"))
    spec.write_text(spec.read_text(encoding="utf-8") + "\nOne more paragraph, added later.\n", encoding="utf-8")
    warm = _warm_and_cold(root, tmp_path, "spec")
    assert warm.charts_cached > 0  # no record changed: the charts' drawings were remembered

    # A changed ledger.yaml (the site's title) and a changed mkdocs.yml (the site's name).
    config = root / "ledger.yaml"
    text = config.read_text(encoding="utf-8")
    assert "\n  title: " in text
    config.write_text(text.replace("\n  title: ", "\n  title: Renamed ", 1), encoding="utf-8")
    _warm_and_cold(root, tmp_path, "ledger-yaml")
    mkdocs_yml = root / "mkdocs.yml"
    text = mkdocs_yml.read_text(encoding="utf-8")
    assert "\nsite_name: " in text
    mkdocs_yml.write_text(text.replace("\nsite_name: ", "\nsite_name: Renamed ", 1), encoding="utf-8")
    _warm_and_cold(root, tmp_path, "mkdocs-yml")

    # A new template: the repository's own record page, by --repository-code.
    import ledger as package

    templates = root / "my-templates"
    templates.mkdir()
    packaged = Path(package.__file__).parent / "templates" / "site" / "record.md.j2"
    (templates / "record.md.j2").write_text(packaged.read_text(encoding="utf-8") + "\nOur own footer.\n", "utf-8")
    text = config.read_text(encoding="utf-8")
    assert "\n  templates:" in text
    config.write_text(text.replace("\n  templates:", "\n  templates: my-templates #", 1), encoding="utf-8")
    warm = _warm_and_cold(root, tmp_path, "template", repository_code=True)
    assert warm.pages and any(
        b"Our own footer." in p.read_bytes() for p in (tmp_path / "warm" / "records").rglob("*.html")
    )
