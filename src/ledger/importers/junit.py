"""Gate records from JUnit XML: pytest `--junitxml`, Maven Surefire, TestNG's junitreports,
jest-junit, go-junit-report and gotestsum, `ctest --output-junit`, and others.

Counts come from the test cases themselves, not from the suite's summary attributes,
so a report whose totals disagree with its cases cannot overstate what ran. A run that
executed no test is outcome `no-tests`, never `pass`. The exit code and the machine's
load are not in the XML: give them with `--exit-code` and `--load`, or run the tests
through `ledger gate run`, which records both.

Times: a timestamp with an offset or `Z`/`UTC`/`GMT` is an instant; one without a zone
(pytest, Surefire, jest-junit) or with an abbreviation such as TestNG's `IST` is the
measuring machine's wall clock, kept as written with `zone: unknown`, never stored as
UTC. gotestsum's `0001-01-01T00:00:00Z` is Go's zero time: no time was recorded.

Files TestNG writes beside its reports are skipped with a note when given among report
files (a glob): `testng-results.xml` (TestNG's own format, the same tests as its
junitreports) and `testng-failed.xml` (a suite for rerunning failures, not results).
Surefire's `flakyFailure` (a test that failed, then passed on a rerun) counts as passed
and is named in `extra.flaky_names`.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .base import Draft, ImportOptions, fail, parse_time, read_text, record_path, shown

FMT = "JUnit XML"


def gate_outcome(executed: int, failed: int, errors: int, exit_code: int | None) -> str:
    if executed == 0:
        return "no-tests"
    if failed or errors or exit_code not in (None, 0):
        return "fail"
    return "pass"


def gate_fields(
    fmt: str,
    options: ImportOptions,
    *,
    passed: int,
    failed: int,
    errors: int,
    skipped: int,
    skipped_names: list[str],
    failed_names: list[str],
    duration: float | None,
    gaps: list[str],
) -> dict[str, Any]:
    """The body of a gate record, shared by every test-report format."""
    executed = passed + failed + errors
    return {
        "format": fmt,
        "command": options.command,
        "exit_code": options.exit_code,
        "executed": executed,
        "passed": passed,
        "failed": failed,
        "errors": errors,
        "skipped": skipped,
        "skipped_names": skipped_names,
        "failed_names": failed_names,
        "duration_s": duration,
        "load_avg": options.load_avg,
        "outcome": gate_outcome(executed, failed, errors, options.exit_code),
        "extra": {"provenance_gaps": gaps} if gaps else {},
    }


#: Root elements of files TestNG writes beside its JUnit reports, and what they are.
_NOT_REPORTS = {
    "testng-results": "TestNG's own results format; the same tests are in its junitreports/TEST-*.xml",
    "suite": "a TestNG suite definition (testng-failed.xml reruns the failures), not results",
}


def parse(paths: list[Path], options: ImportOptions) -> list[Draft]:
    drafts = []
    for path in paths:
        draft = parse_one(path, options, among_others=len(paths) > 1)
        if draft is not None:
            drafts.append(draft)
    return drafts


def parse_one(path: Path, options: ImportOptions, *, among_others: bool = False) -> Draft | None:
    """One report as a gate draft; None for a file TestNG writes beside its reports, given among them."""
    suites = _suites(_read_xml(path), path, options, among_others)
    if suites is None:
        return None
    tally = _Tally()
    for s, suite in enumerate(suites):
        _count_suite(tally, path, s, suite)
    data = gate_fields(
        "junit",
        options,
        passed=tally.passed,
        failed=tally.failed,
        errors=tally.errors,
        skipped=tally.skipped,
        skipped_names=tally.skipped_names,
        failed_names=tally.failed_names,
        duration=tally.duration,
        gaps=_gaps(options),
    )
    if tally.hosts or tally.stamps:
        data["allocation"] = _allocation(path, tally)
    if tally.stamps:
        data["observed_at"] = min(tally.stamps)
    elif tally.local:
        data.setdefault("extra", {})["measured_at"] = min(tally.local, key=lambda m: str(m.get("local", "")))
    if tally.flaky:
        data.setdefault("extra", {})["flaky_names"] = tally.flaky
    if tally.duration is None:
        data.setdefault("extra", {})["duration"] = "unknown: no testsuite or testcase time in the file"
    elif tally.duration_from_cases:
        data.setdefault("extra", {})["duration"] = "a testsuite without a time is timed by its test cases' times"
    executed = tally.passed + tally.failed + tally.errors
    data["title"] = (
        f"{path.name}: {executed} executed, {tally.passed} passed, {tally.failed} failed, "
        f"{tally.errors} errors, {tally.skipped} skipped"
    )
    return Draft("gate", {k: v for k, v in data.items() if v is not None}, str(path), 1)


def _read_xml(path: Path) -> ET.Element:
    """The report's root element; a syntax error names its line and column."""
    text = read_text(path)
    try:
        return ET.fromstring(text)
    except ET.ParseError as exc:
        line, col = exc.position
        raise fail(
            path,
            f"line {line}, column {col + 1}",
            f"does not parse as XML: {exc.msg if hasattr(exc, 'msg') else exc}",
            "give the XML file the test runner wrote",
        ) from None


def _suites(root: ET.Element, path: Path, options: ImportOptions, among_others: bool) -> list[ET.Element] | None:
    """The report's test suites; None (with a note) for a TestNG side file given among reports."""
    if root.tag == "testsuites":
        return root.findall("testsuite")
    if root.tag == "testsuite":
        return [root]
    if root.tag in _NOT_REPORTS and among_others:
        options.notes.append(f"skipped {record_path(path)}: {_NOT_REPORTS[root.tag]}")
        return None
    if root.tag in _NOT_REPORTS:
        raise fail(
            path,
            "line 1",
            f"root element is <{root.tag}>: {_NOT_REPORTS[root.tag]}",
            "give the JUnit XML reports (TestNG: test-output/junitreports/TEST-*.xml)",
        )
    raise fail(
        path,
        "line 1",
        f"root element is <{root.tag}>, expected <testsuites> or <testsuite>",
        "give a JUnit XML report",
    )


@dataclass
class _Tally:
    """What a report's suites add up to: the test cases by outcome, and where and when they ran."""

    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    skipped_names: list[str] = field(default_factory=list)
    failed_names: list[str] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)  # passed on a rerun (Surefire's flakyFailure)
    duration: float | None = None  # None: no suite says how long it ran
    duration_from_cases: bool = False  # a suite without a time, timed by its test cases
    hosts: set[str] = field(default_factory=set)
    stamps: list[str] = field(default_factory=list)  # UTC instants
    local: list[dict[str, Any]] = field(default_factory=list)  # wall clocks whose zone is unknown


def _count_suite(tally: _Tally, path: Path, s: int, suite: ET.Element) -> None:
    """Add one suite's host, timestamp, time and test cases to the tally."""
    host = suite.get("hostname")
    if host:
        tally.hosts.add(host)
    if suite.get("timestamp"):
        when = parse_time(
            suite.get("timestamp"),
            path,
            f"testsuite[{s}] attribute timestamp",
            naive="local",
            tool="the test runner",
            writes="an ISO 8601 date and time",
        )
        if when.observed_at:
            tally.stamps.append(when.observed_at)
        elif when.measured_at:
            tally.local.append(when.measured_at)
    seconds = _seconds(path, f"testsuite[{s}] attribute time", suite.get("time"))
    cases = list(suite.iter("testcase"))
    if seconds is None:
        # No suite time (k6, mbed): the test cases' times when they have them, else unknown, not 0.
        timed = [
            _seconds(path, f"testsuite[{s}] testcase[{c}] attribute time", case.get("time"))
            for c, case in enumerate(cases)
        ]
        known = [t for t in timed if t is not None]
        if known:
            seconds = math.fsum(known)
            tally.duration_from_cases = True
    if seconds is not None:
        tally.duration = (tally.duration or 0.0) + seconds
    for case in cases:
        _count_case(tally, case)


def _seconds(path: Path, where: str, text: str | None) -> float | None:
    """A time attribute in seconds; None when absent."""
    if text is None or not text.strip():
        return None
    try:
        value = float(text)
    except ValueError:
        raise fail(
            path, where, f"is {shown(text)}, expected seconds", "give the XML file the test runner wrote"
        ) from None
    if not math.isfinite(value) or value < 0:
        raise fail(path, where, f"is {shown(text)}, expected seconds", "give the XML file the test runner wrote")
    return value


def _count_case(tally: _Tally, case: ET.Element) -> None:
    """Count one test case as an error, a failure, skipped or passed (the first that applies)."""
    name = "::".join(dict.fromkeys(p for p in (case.get("classname"), case.get("name")) if p))
    status = case.get("status")  # ctest writes run, fail, notrun, disabled
    if case.find("error") is not None:
        tally.errors += 1
        tally.failed_names.append(name)
    elif case.find("failure") is not None:
        tally.failed += 1
        tally.failed_names.append(name)
    elif case.find("skipped") is not None or status in ("notrun", "disabled"):
        tally.skipped += 1
        tally.skipped_names.append(name)
    else:
        tally.passed += 1
        if case.find("flakyFailure") is not None or case.find("flakyError") is not None:
            tally.flaky.append(name)


def _gaps(options: ImportOptions) -> list[str]:
    """What a JUnit report cannot say and the command line did not give."""
    gaps = ["JUnit XML records no commit"] if not options.source_sha else []
    if options.exit_code is None:
        gaps.append("exit code unknown: JUnit XML does not hold it (give --exit-code or use `ledger gate run`)")
    if not options.load_avg:
        gaps.append("machine load unknown: JUnit XML does not hold it (give --load or use `ledger gate run`)")
    return gaps


def _allocation(path: Path, tally: _Tally) -> dict[str, Any]:
    """The run's allocation, named by its hosts and its earliest time (the file's name when none)."""
    if tally.stamps:
        when = min(tally.stamps)
    elif tally.local:
        when = str(tally.local[0].get("local") or tally.local[0].get("as_written"))
    else:
        when = path.name
    return {
        "id": f"junit-{'-'.join(sorted(tally.hosts)) or 'unknown-host'}-" + when,
        "scheduler": "local",
        "hosts": sorted(tally.hosts),
    }
