"""A site build reads its inputs once and passes them down: mkdocs.yml parsed once (by ledger;
MkDocs reads it again itself), ledger.yaml's rules configured once, `SiteData` built once,
each contract's stopping point computed once. Counted on a real build with a profiler hook,
nothing replaced."""

from __future__ import annotations

import sys
from collections import Counter

import pytest

from ledger.analysis.stopping_point import stopping_point
from ledger.checks.registry import configure
from ledger.site import mkdocs_run
from ledger.site.builder import build_site
from ledger.site.context import SiteData
from ledger.store.ledger import Ledger

COUNTED = {
    mkdocs_run._load.__code__: "mkdocs.yml parsed",
    configure.__code__: "rules configured",
    SiteData.build.__func__.__code__: "SiteData built",
    stopping_point.__code__: "stopping point",
}


@pytest.mark.slow
def test_a_build_reads_and_derives_each_input_once(campaign, tmp_path) -> None:
    ledger = Ledger.open(campaign.root)
    calls: Counter[str] = Counter()
    contracts: Counter[str] = Counter()

    def count(frame, event, arg):
        if event == "call" and frame.f_code in COUNTED:
            calls[COUNTED[frame.f_code]] += 1
            if frame.f_code is stopping_point.__code__:
                contract = frame.f_locals.get("contract")
                contracts[getattr(contract, "id", None)] += 1

    sys.setprofile(count)
    try:
        result = build_site(ledger, out=tmp_path / "site", strict=False)
    finally:
        sys.setprofile(None)
    assert result.pages > 10 and (tmp_path / "site" / "index.html").is_file()
    known = {r.id for r in ledger.records("contract")}
    assert calls["mkdocs.yml parsed"] == 1, calls
    assert calls["rules configured"] == 1, calls
    assert calls["SiteData built"] == 1, calls
    assert set(contracts) == known and all(n == 1 for n in contracts.values()), contracts
