"""`ledger compare` on imported real results, and the rank test against brute force."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest

from ledger.analysis.compare import cliffs_delta, hodges_lehmann, mann_whitney_u
from tests.conftest import cli

#: Real result files other tools wrote, committed with their SOURCES.md.
LOCAL = Path(__file__).resolve().parents[1] / "importers" / "data"


def significant_digits(text: str) -> int:
    """Significant digits of a number as printed: "-0.0012" has 2, "1.20e-05" has 3, "120" has 3."""
    mantissa = text.strip().lstrip("+-").lower().split("e")[0]
    digits = mantissa.replace(".", "").lstrip("0")
    return len(digits) if "." in mantissa else len(digits.rstrip("0")) or 1


def test_significant_digits_counts_signs_and_exponents() -> None:
    assert [significant_digits(t) for t in ("-0.0012", "0.0012", "-1.2e-05", "3.40", "120", "-7")] == [2, 2, 2, 3, 2, 1]


def _brute_p(a: list[float], b: list[float]) -> float:
    """Two-sided exact p by enumerating every split of the pooled values."""
    pooled, m = a + b, len(a)

    def u_of(xs, ys):
        return sum(1 for y in ys for x in xs if y > x)

    observed = u_of(a, b)
    counts = [
        u_of([pooled[i] for i in idx], [pooled[j] for j in range(len(pooled)) if j not in idx])
        for idx in itertools.combinations(range(len(pooled)), m)
    ]
    lower = sum(c <= observed for c in counts) / len(counts)
    upper = sum(c >= observed for c in counts) / len(counts)
    return min(1.0, 2 * min(lower, upper))


@pytest.mark.parametrize(
    "a,b",
    [
        ([1.0, 2.5, 3.1], [4.0, 0.5, 6.2, 7.7]),
        ([10.0, 11.0, 12.0, 13.0, 14.0], [9.5, 11.5, 12.5, 15.0, 16.0]),
        ([3.0, 1.0], [2.0]),
    ],
)
def test_exact_u_matches_enumeration(a, b) -> None:
    test = mann_whitney_u(a, b)
    assert test.method == "exact"
    assert test.p == pytest.approx(_brute_p(a, b))
    assert mann_whitney_u(b, a).p == pytest.approx(test.p)


def test_normal_approximation_with_ties_and_effect_sizes() -> None:
    a, b = [1, 1, 2, 2, 3] * 20, [2, 3, 3, 4, 4] * 20
    test = mann_whitney_u(a, b)
    assert test.method == "normal approximation" and test.p < 1e-6
    assert cliffs_delta(a, b) == pytest.approx(
        (sum(y > x for y in b for x in a) - sum(y < x for y in b for x in a)) / 10_000
    )
    assert hodges_lehmann(a, b) == 1
    same = mann_whitney_u([5.0] * 10, [5.0] * 10)
    assert same.p == 1.0
    assert math.isclose(cliffs_delta([1, 2], [1, 2]), 0.0)


def _import(repo: Path, *args: str) -> list[str]:
    result = cli(repo, "import", *args, "--format", "json")
    assert result.returncode == 0, result.stderr
    return [r["id"] for r in json.loads(result.stdout)["records"] if r["kind"] == "measurement"]


def test_compare_one_allocation_json_and_table(repo: Path) -> None:
    a, b = _import(repo, "hyperfine", str(LOCAL / "hyperfine_sleep.json"))
    result = cli(repo, "compare", a, b, "--format", "json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["attributable"] is True and out["test"]["method"] == "exact"
    assert out["a"]["n"] == 12 and out["b"]["n"] == 12
    assert out["difference"] == pytest.approx(out["b"]["median"] - out["a"]["median"])
    # Twelve noisy sleeps support two significant figures of the difference, not six: it is
    # rounded at its uncertainty's leading digit.
    number = out["difference_text"].split()[0]
    assert significant_digits(number) <= 2, number
    table = cli(repo, "compare", a, b)
    assert table.returncode == 0 and "Mann-Whitney U" in table.stdout and "one allocation" in table.stdout
    # The text prints exactly the JSON's figures: one policy, no second rounding.
    assert out["difference_text"] in table.stdout and out["percent_text"] in table.stdout
    assert f"{out['a']['median_text']} {out['a']['unit']}" in table.stdout


def test_cross_allocation_refused_then_labelled(repo: Path) -> None:
    files = sorted(str(p) for p in (LOCAL / "pytest-benchmark" / "pytest-benchmark-2.5").glob("*.json"))
    assert len(files) == 3
    # The 2015 files name a commit of the project they measured, which no test clones: declared
    # (its clone absent, so sha-unverified warns), as a user imports another project's results.
    config = repo / "ledger.yaml"
    text = config.read_text().replace("sources: {}", "sources:\n  unknown:pytest-benchmark: ../pb")
    config.write_text(text.replace("\nrules:\n", "\nrules:\n  sha-unverified: {severity: warning}\n", 1))
    first, second, _ = _import(repo, "pytest-benchmark", *files)
    refused = cli(repo, "compare", first, second)
    assert refused.returncode == 2 and "allocation" in refused.stderr and "--allow-cross-allocation" in refused.stderr
    allowed = cli(repo, "compare", first, second, "--allow-cross-allocation", "--format", "json")
    assert allowed.returncode == 0, allowed.stderr
    out = json.loads(allowed.stdout)
    assert out["attributable"] is False and out["label"].startswith("NOT ATTRIBUTABLE")
    # The 2015 files kept only summaries, with min and max: judged by their recorded ranges
    # (issue 17), never by a rank test or an effect size.
    assert out["test"]["method"] == "range overlap" and out["cliffs_magnitude"] is None
    table = cli(repo, "compare", first, second, "--allow-cross-allocation")
    assert "NOT ATTRIBUTABLE" in table.stdout


def test_metric_and_contract_mismatch_refused(repo: Path) -> None:
    ids = _import(repo, "pyperf", str(LOCAL / "pyperf/mult_list_py38.json"))
    other_metric = cli(repo, "compare", ids[0], ids[1])
    assert other_metric.returncode == 2 and "metric" in other_metric.stderr
    contracts = []
    for name in ("bf16-master", "fp32-master"):
        added = cli(
            repo,
            "add",
            "contract",
            "-",
            input=json.dumps(
                {
                    "name": name,
                    "model": "m",
                    "param_precision": name[:4],
                    "optimizer_state_precision": "fp32",
                    "compute_precision": "bf16",
                    "warmup_steps": 0,
                    "measured_steps": 20,
                }
            ),
        )
        assert added.returncode == 0, added.stderr
        contracts.append(added.stdout.strip())
    a = _import(repo, "hyperfine", str(LOCAL / "hyperfine_sleep.json"), "--contract", contracts[0])[0]
    b = _import(
        repo, "hyperfine", str(LOCAL / "hyperfine_sleep.json"), "--contract", contracts[1], "--allocation", "x"
    )[1]
    refused = cli(repo, "compare", a, b, "--allow-cross-allocation")
    assert refused.returncode == 2 and "different contracts" in refused.stderr


def test_mlperf_sets_give_the_verdict_their_numbers_give(repo: Path) -> None:
    logs = sorted(
        (LOCAL / "mlperf/training_results_v4.0/ASUSTeK/results/ESC_N8A-E12/llama2_70b_lora").glob("result_*.txt")
    )
    assert len(logs) == 10
    ids = _import(repo, "mlperf", *map(str, logs))[:10]  # the ten runs; the last id is the result set
    result = cli(repo, "compare", ",".join(ids[:5]), ",".join(ids[5:]), "--allow-cross-allocation", "--format", "json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["a"]["basis"] == "one value per measurement" and out["a"]["n"] == 5
    assert out["test"]["method"] == "exact"
    # The verdict, worked out here from the records themselves: one median per run, the exact
    # p by enumerating every split, alpha 0.05, and the direction the records declare.
    runs = [json.loads(cli(repo, "show", rid, "--format", "json").stdout) for rid in ids]
    a, b = [r["median"] for r in runs[:5]], [r["median"] for r in runs[5:]]
    p = _brute_p(a, b)
    assert out["test"]["p"] == pytest.approx(p)
    lower_is_better = runs[0].get("lower_is_better", True)
    if p >= 0.05:
        expected = "no significant difference"
    else:
        b_lower = sorted(b)[2] < sorted(a)[2]
        expected = "B better" if b_lower == lower_is_better else "B worse"
    assert out["verdict"] == expected
