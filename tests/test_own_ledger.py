"""This repository keeps its own evidence in its own ledger, and its own check passes."""

from __future__ import annotations

import json

from conftest import ROOT, run_ledger


def test_the_projects_own_ledger_is_clean() -> None:
    result = run_ledger(ROOT, "-C", str(ROOT), "check", "--all", "--format", "json")
    report = json.loads(result.stdout)
    assert result.returncode == 0, [v for v in report["violations"] if v["severity"] == "error"]
    # A commit that resolves here but that no branch or tag contains (a branch rebased after its
    # records were stamped) is only a warning in a working copy, and an error in any clone that
    # copies reachable objects only, as CI's does: hold our own records to the clone's standard.
    historical = [v for v in report["violations"] if v["rule"] == "sha-abbreviated" and "historical" in v["message"]]
    assert not historical, historical


def test_the_projects_own_ledger_holds_benchmark_and_gpu_evidence() -> None:
    rows = json.loads(run_ledger(ROOT, "-C", str(ROOT), "list", "--format", "json").stdout)
    kinds = {r["kind"] for r in rows}
    assert {"contract", "environment", "ceiling", "flop-audit", "measurement"} <= kinds
    assert any("H200" in (r["topology"] or "") for r in rows)


def _campaign_page():
    """benchmarks/gpu/campaign_page.py as a module (benchmarks/ is no package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("campaign_page", ROOT / "benchmarks" / "gpu" / "campaign_page.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_campaign_page_and_readme_line_are_what_the_committed_ledger_renders() -> None:
    from ledger.store import Ledger

    page = _campaign_page()
    records = Ledger.open(ROOT).records()
    fix = "run `python benchmarks/gpu/campaign_page.py` after adding the campaign's records, and commit both"
    assert (ROOT / "docs" / "campaign-h200.md").read_text(encoding="utf-8") == page.render(records), (
        f"docs/campaign-h200.md differs from what the ledger renders: {fix}"
    )
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert page.with_readme(readme, page.readme_headline(records)) == readme, (
        f"README.md's campaign line differs from what the ledger renders: {fix}"
    )


def test_the_campaign_pages_figures_move_with_the_records() -> None:
    """A faster accepted run of the campaign, added to the records, is the page's new headline."""
    from ledger.analysis.metrics import mfu_percent
    from ledger.schema.kinds import Decision, Measurement
    from ledger.store import Ledger
    from ledger.store.ids import new_id

    page = _campaign_page()
    records = Ledger.open(ROOT).records()
    final = max(
        (r for r in records if isinstance(r, Measurement) and (r.extra or {}).get("final") and r.outcome == "ok"),
        key=lambda r: r.mfu_percent or 0.0,
    )
    faster = final.median * 0.9
    run = final.model_copy(
        update={
            "id": new_id(),
            "samples": [faster] * 3,
            "median": faster,
            "min": faster,
            "max": faster,
            "mfu_percent": final.mfu_percent / 0.9,
            "title": "configuration reached: a change that never ran (3 steps)",
        }
    )
    template = next(r for r in records if isinstance(r, Decision))
    decision = template.model_copy(
        update={"id": new_id(), "family": "a family never tried", "verdict": "accepted", "evidence": [run.id]}
    )
    before, after = page.render(records), page.render([*records, run, decision])
    audit = next(r for r in records if r.id == final.flop_audit)
    mfu = mfu_percent(audit.flop_per_sample, final.global_batch, faster, 1, audit.peak.tflops_per_gpu)
    assert f"to {mfu:.1f}% MFU" in after.splitlines()[0]
    assert f"to {mfu:.1f}% MFU" not in before
    assert f"{faster:.4f} s per step of {final.global_batch} samples" in after
    assert "a family never tried" in after and "a change that never ran" in after
