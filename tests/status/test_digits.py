"""One digit policy everywhere: the same record's figures read the same in `ledger show`,
`ledger list`, `ledger status`, `ledger compare` and the site, in text and in JSON."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import cli

A_SAMPLES = [0.7079, 0.7081, 0.7075, 0.7090, 0.7078, 0.7082, 0.7080, 0.7077]
B_SAMPLES = [0.7001, 0.6999, 0.7004, 0.7010, 0.6998, 0.7002, 0.7000, 0.7003]


def add(repo: Path, kind: str, text: str, *extra: str) -> str:
    result = cli(repo, "add", kind, "-", *extra, input=text)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def numbers(text: str) -> list[str]:
    return re.findall(r"\d+\.\d+", text)


@pytest.fixture
def campaign(repo: Path) -> dict[str, str]:
    ids = {"contract": add(repo, "contract", '{"name": "digits", "model": "dit"}')}
    body = {"contract": ids["contract"], "global_batch": 8, "world_size": 4, "health": "healthy"}
    ids["a"] = add(
        repo,
        "measurement",
        json.dumps({**body, "samples": A_SAMPLES}),
        "--allocation",
        "job-1",
        "--topology",
        "4x H200",
    )
    ids["b"] = add(
        repo,
        "measurement",
        json.dumps({**body, "samples": B_SAMPLES}),
        "--allocation",
        "job-1",
        "--topology",
        "4x H200",
    )
    # No spread: printed as recorded, trailing zeros kept; a byte count in readable units.
    ids["bare"] = add(
        repo,
        "measurement",
        '{"metric": "decode_time", "median": 7.2590400, "peak_allocated_bytes": 52022503936}',
        "--allocation",
        "job-2",
    )
    # Cited, so it gets a page of its own on the site.
    add(
        repo,
        "decision",
        json.dumps({"family": "decode path", "verdict": "research", "evidence": [ids["a"], ids["bare"]]}),
    )
    return ids


def test_the_same_figures_in_show_list_status_compare_and_site(repo: Path, campaign: dict[str, str]) -> None:
    from ledger.analysis.figures import quote_of
    from ledger.store import Ledger

    book = Ledger.open(repo)
    a, bare = book.get(campaign["a"]), book.get(campaign["bare"])
    a_text = quote_of(a, a.median, "s", field="median")
    assert a_text == "0.708 s"  # eight samples' confidence interval supports three figures
    bare_text = quote_of(bare, bare.median, "s", field="median")
    assert bare_text == "7.2590400 s"  # as recorded: the trailing zeros survive JSON

    # show: the result line leads; JSON keeps the record as stored, with its decimals beside it.
    shown = cli(repo, "show", campaign["a"]).stdout
    assert shown.splitlines()[1].startswith(f"{a_text} median step time, IQR ")
    assert all(len(n.replace(".", "").lstrip("0")) <= 10 for n in numbers(shown)), shown  # no float noise
    bare_shown = cli(repo, "show", campaign["bare"])
    assert bare_text in bare_shown.stdout and "48.4 GiB (52,022,503,936 bytes)" in bare_shown.stdout
    raw = json.loads(cli(repo, "show", campaign["bare"], "--format", "json").stdout)
    assert raw["median"] == 7.25904 and raw["extra"]["decimals"] == {"median": 7}

    # list: the value column, text and JSON alike.
    listed = cli(repo, "list", "--kind", "measurement", env={"COLUMNS": "120"}).stdout
    assert a_text in listed and bare_text in listed
    rows = {r["id"]: r for r in json.loads(cli(repo, "list", "--format", "json").stdout)}
    assert rows[campaign["a"]]["value"] == a_text and rows[campaign["bare"]]["value"] == bare_text

    # status: the stopping point's row, text and JSON alike.
    status = json.loads(cli(repo, "status", "--format", "json").stdout)
    (row,) = status["sections"][0]["rows"]
    assert row["median"] == quote_of(book.get(row["measurement"]), row["median_value"], "s", field="median")
    assert row["median"] in cli(repo, "status").stdout

    # compare: the medians as above; the difference rounded at its uncertainty, the same string in text and JSON.
    out = json.loads(cli(repo, "compare", campaign["a"], campaign["b"], "--format", "json").stdout)
    assert f"{out['a']['median_text']} s" == a_text
    text = cli(repo, "compare", campaign["a"], campaign["b"]).stdout
    for key in ("difference_text", "percent_text"):
        assert out[key] in text, (key, out[key], text)
    # -1.10%: its uncertainty (0.02 points) puts the last digit in the hundredths.
    assert out["percent_text"] == "-1.10%" and out["difference_text"].startswith("-0.0078")

    # The site: the home page's stopping point and each record's page.
    built = cli(repo, "site", "build", "--strict")
    assert built.returncode == 0, built.stdout + built.stderr
    docs = repo / ".ledger-build" / "docs"
    assert f'<span class="ledger-fig">{row["median"]}</span>' in (docs / "index.md").read_text().replace("\\.", ".")
    page_a = (docs / "records" / "measurement" / f"{campaign['a']}.md").read_text()
    assert f'<p class="ledger-result">{a_text} <small>' in page_a
    page_bare = (docs / "records" / "measurement" / f"{campaign['bare']}.md").read_text()
    assert f'<p class="ledger-result">{bare_text} <small>' in page_bare
    assert '<abbr class="ledger-exact" title="52,022,503,936 bytes">48.4 GiB</abbr>' in page_bare


def test_a_transcribed_delta_is_never_finer_than_float_noise() -> None:
    """A = B (one published baseline) leaves the recorded digits as the delta's resolution;
    a value computed in floats (0.1 + 0.2) carries noise, not 17 recorded digits."""
    from types import SimpleNamespace

    from ledger.analysis.figures import sandwich_figures
    from ledger.analysis.sandwich import compute

    a = 0.1 + 0.2  # 0.30000000000000004
    r = compute(a, 0.29, a, floor_percent=0.5, lower_is_better=True)
    s = SimpleNamespace(**r.record_fields(), unit="s", control_a=None, candidate=None, control_b=None)
    shown = sandwich_figures(s)
    assert shown["delta"] == "-0.01 s", shown
    assert shown["delta_percent"] == "-3%", shown  # 0.01 s of 0.3 s: the percent's own resolution


def test_the_ends_of_a_range_read_the_same_in_show_and_on_the_record_page(repo: Path) -> None:
    """min 0.7079 and max 0.7121 beside a 0.71 median: to the median's two digits both ends
    would read 0.71; as observations they are quoted at the range's width, everywhere."""
    rid = add(repo, "measurement", '{"min": 0.7079, "median": 0.71, "max": 0.7121, "unit": "s"}')
    text = cli(repo, "show", rid).stdout
    assert "0.708" in text and "0.712" in text, text
    # cited by a decision, the measurement has a page of its own
    add(
        repo,
        "decision",
        json.dumps({"family": "ranges", "verdict": "accepted", "evidence": [rid], "title": "cites it"}),
    )
    built = cli(repo, "site", "build")
    assert built.returncode == 0, built.stderr
    page = next((repo / "site").rglob(f"{rid}.html")).read_text(encoding="utf-8")
    assert "0.708" in page and "0.712" in page


def test_a_duration_has_no_zero_tail_and_no_sixty() -> None:
    """`~26 min`, never `~26 min 0 s`; 119.6 s is 2 min, never 1 min 60 s."""
    from ledger.analysis.figures import readable_duration

    assert [readable_duration(s) for s in (95, 1560, 119.6, 3599.7, 7200, 7260)] == [
        "1 min 35 s",
        "26 min",
        "2 min",
        "1 h",
        "2 h",
        "2 h 1 min",
    ]
