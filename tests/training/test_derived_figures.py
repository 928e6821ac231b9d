"""Wrong records refused: every figure a record states that follows from itself or from the
records it cites is recomputed at add and in check (rule derived-figures), and refused when
it disagrees beyond the rounding it was written at; a sandwich written by `ledger sandwich
--records` carries its candidate arm's commit and its arms' observed_at.

The cases are the ones the LTX-2 campaign's re-entry let through: a midpoint of 0.9 s for
arms of 0.721 s, an a_value of 0.5 s naming an arm whose median is 0.721040 s,
delta_percent 5.0 labelled neutral, a sandwich stamped on another allocation than its arms,
and mfu_percent 45.0 beside an audit, median and batch that give 40.810314%."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli, git

AUDIT = {
    "flop_per_sample": 353880819892224,
    "counted_flop_per_sample": 353880819892224,
    "derivation": "strict no-recompute blocks-only model FLOP at 4,290 video / 1,024 text tokens",
    "peak": {"name": "house-2450", "tflops_per_gpu": 2450, "vendor_tflops_per_gpu": 2500},
    "peaks": [{"name": "vendor-dense-bf16", "tflops_per_gpu": 2500}],
}
ALLOC = {"id": "1627918", "scheduler": "slurm", "topology": "4x GB200"}


def add(repo: Path, kind: str, body: dict, *extra: str):
    (repo / "in.json").write_text(json.dumps(body))
    return cli(repo, "add", kind, "in.json", *extra)


def added(repo: Path, kind: str, body: dict, *extra: str) -> str:
    result = add(repo, kind, body, *extra)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def arm(median: float, sha: str | None = None, when: str | None = None, unit: str = "s") -> dict:
    body: dict = {
        "metric": "step_time",
        "unit": unit,
        "median": median,
        "world_size": 4,
        "local_batch": 2,
        "global_batch": 8,
        "allocation": ALLOC,
    }
    if sha:
        body["source"] = {"sha": sha}
    if when:
        body["observed_at"] = when
    return body


@pytest.fixture
def arms(repo: Path) -> tuple[Path, list[str]]:
    ids = [added(repo, "measurement", arm(v)) for v in (0.721040, 0.7210, 0.721290)]
    return repo, ids


def sandwich(ids: list[str], **over) -> dict:
    a, c, b = 0.721040, 0.7210, 0.721290
    mid = (a + b) / 2
    body = {
        "control_a": ids[0],
        "candidate": ids[1],
        "control_b": ids[2],
        "metric": "step_time",
        "unit": "s",
        "a_value": a,
        "candidate_value": c,
        "b_value": b,
        "midpoint": mid,
        "delta": c - mid,
        "delta_percent": 100 * (c - mid) / mid,
        "drift_percent": 100 * abs(a - b) / mid,
        "floor_percent": 0.5,
        "verdict": "neutral",
        "allocation": ALLOC,
    }
    body.update(over)
    return body


def test_a_consistent_sandwich_is_taken(arms) -> None:
    repo, ids = arms
    assert add(repo, "sandwich", sandwich(ids)).returncode == 0


@pytest.mark.parametrize(
    ("over", "field", "says"),
    [
        ({"midpoint": 0.9}, "midpoint", "(A + B) / 2"),
        (
            {"a_value": 0.5, "midpoint": 0.610645, "delta": 0.110355, "delta_percent": 18.07188},
            "a_value",
            "records 0.72104 s",
        ),
        ({"delta_percent": 5.0}, "delta_percent", "100 x (candidate - midpoint)"),
        ({"delta": 0.01}, "delta", "candidate - midpoint"),
        ({"drift_percent": 1.5}, "drift_percent", "|A - B|"),
        ({"allocation": {**ALLOC, "id": "1622676"}}, "allocation", "stamped on allocation 1622676"),
    ],
)
def test_a_sandwich_contradicting_its_arms_is_refused_at_add(arms, over, field, says) -> None:
    repo, ids = arms
    result = add(repo, "sandwich", sandwich(ids, **over))
    assert result.returncode == 2, result.stdout
    assert f"field {field}" in result.stderr and says in result.stderr, result.stderr
    assert not list((repo / "ledger" / "records" / "sandwich").rglob("*.json"))


def test_rounded_figures_are_taken_at_the_rounding_they_were_written_at(arms) -> None:
    """The campaign's own figures, six decimals: within half a last digit of what the arms give."""
    repo, ids = arms
    body = sandwich(ids, midpoint=0.721165, delta=-0.000165, delta_percent=-0.022880, drift_percent=0.034665)
    assert add(repo, "sandwich", body).returncode == 0


def test_a_sandwich_of_arms_in_ms_and_s_converts(repo: Path) -> None:
    ids = [
        added(repo, "measurement", arm(v, unit=u))
        for v, u in ((393.934851, "ms"), (0.422406662, "s"), (389.372927, "ms"))
    ]
    result = cli(repo, "sandwich", "--records", *ids, "--format", "json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    # In the candidate's unit (s), the arms in ms converted.
    assert round(out["a"], 9) == 0.393934851 and round(out["candidate"], 9) == 0.422406662
    assert round(out["delta_percent"], 6) == 7.852028


@pytest.mark.parametrize(("mfu", "code"), [(45.0, 2), (40.810314, 0), (40.8103, 0), (40.81, 0), (40.82, 2)])
def test_mfu_percent_is_recomputed_from_audit_median_and_batch(repo: Path, mfu: float, code: int) -> None:
    """45.0 and 40.82 (to which 40.810314 does not round) are refused; 40.810314, 40.8103 and
    40.81 (each a rounding of what the records give) are taken."""
    audit = added(repo, "flop-audit", AUDIT)
    body = {**arm(0.7078659144), "flop_audit": audit, "mfu_percent": mfu}
    result = add(repo, "measurement", body)
    assert result.returncode == code, result.stderr
    if code:
        assert (
            "derived-figures" in result.stderr and "40.810314" in result.stderr and "field mfu_percent" in result.stderr
        )


def test_throughput_is_recomputed_from_batch_and_median(repo: Path) -> None:
    assert add(repo, "measurement", {**arm(0.7078659144), "throughput": 11.301575}).returncode == 0
    refused = add(repo, "measurement", {**arm(0.7078659144), "throughput": 12.0})
    assert refused.returncode == 2 and "field throughput" in refused.stderr and "11.3015" in refused.stderr


def test_check_refuses_what_add_refuses(arms) -> None:
    """A record written past `ledger add` (hashed by hand) is refused by check --all as well."""
    from ledger.store import canonical_bytes, content_hash

    repo, ids = arms
    sid = added(repo, "sandwich", sandwich(ids))
    (path,) = (repo / "ledger" / "records" / "sandwich").rglob(f"{sid}.json")
    data = json.loads(path.read_bytes())
    data["midpoint"] = 0.9
    data.pop("sha256")
    data["sha256"] = content_hash(data)
    path.write_bytes(canonical_bytes(data))
    result = cli(repo, "check", "--all")
    assert result.returncode == 1 and "derived-figures" in result.stdout and "midpoint" in result.stdout


def test_sandwich_records_takes_the_candidates_commit_and_the_arms_dates(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    ids = [
        added(repo, "measurement", arm(v, sha=sha, when=when))
        for v, sha, when in (
            (0.721040, "20c36acef", "2026-07-21T10:00:00Z"),
            (0.7210, "52f1114dd", "2026-07-21T11:00:00Z"),
            (0.721290, "20c36acef", "2026-07-21T12:00:00Z"),
        )
    ]
    result = cli(
        repo,
        "sandwich",
        "--records",
        *ids,
        "--regate",
        "--family",
        "re-gate",
        "--tag",
        "regate",
        "--tracker-run",
        "iopu4dwm",
        "--format",
        "json",
    )
    assert result.returncode == 0, result.stderr
    sid = json.loads(result.stdout)["sandwich"]
    (path,) = (repo / "ledger" / "records" / "sandwich").rglob(f"{sid}.json")
    data = json.loads(path.read_bytes())
    assert data["source"]["sha"] == "52f1114dd" != head
    assert data["observed_at"].startswith("2026-07-21T12:00:00")
    assert data["regate"] is True and data["family"] == "re-gate" and data["tags"] == ["regate"]
    assert data["links"]["tracker_runs"] == ["iopu4dwm"]
    assert data["allocation"]["id"] == "1627918"


def test_drift_against_a_has_a_field_checked_against_the_arms(repo: Path) -> None:
    """The equal-batch gate states 0.198028% control drift: |A - B| / A, not / midpoint (0.197830%).
    `drift_vs_a_percent` holds it beside `drift_percent`; a figure the arms contradict is refused."""
    from ledger.analysis.figures import sandwich_figures
    from ledger.schema.kinds import Sandwich

    a, c, b = 0.7426303995, 0.7078659144, 0.7441010120
    ids = [added(repo, "measurement", arm(v)) for v in (a, c, b)]
    mid = (a + b) / 2
    body = {
        **sandwich(ids),
        "a_value": a,
        "candidate_value": c,
        "b_value": b,
        "midpoint": 0.7433657057,
        "delta": c - mid,
        "delta_percent": 100 * (c - mid) / mid,
        "drift_percent": 0.197830,
        "drift_vs_a_percent": 0.198028,
        "verdict": "faster",
    }
    assert add(repo, "sandwich", body).returncode == 0
    refused = add(repo, "sandwich", {**body, "drift_vs_a_percent": 0.197830})
    assert refused.returncode == 2 and "field drift_vs_a_percent" in refused.stderr and "|A - B| / A" in refused.stderr
    record = Sandwich.model_validate(
        {
            **body,
            "id": "01K00000000000000000000000",
            "created_at": "2026-07-21T00:00:00Z",
            "tool": {"version": "0"},
            "sha256": "0" * 64,
        }
    )
    assert sandwich_figures(record)["drift_vs_a_percent"] == "0.198028%"
    derived = record.model_copy(update={"drift_vs_a_percent": None})
    assert sandwich_figures(derived)["drift_vs_a_percent"] == "0.20%"
