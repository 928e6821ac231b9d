"""Gate records from JUnit XML (pytest `--junitxml`, `ctest --output-junit`, and others).

Counts come from the test cases themselves, not from the suite's summary attributes,
so a report whose totals disagree with its cases cannot overstate what ran. A run that
executed no test is outcome `no-tests`, never `pass`. The exit code and the machine's
load are not in the XML: give them with `--exit-code` and `--load`, or run the tests
through `ledger gate run`, which records both.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from .base import Draft, ImportOptions, fail, parse_date, read_text

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


def parse(paths: list[Path], options: ImportOptions) -> list[Draft]:
    return [parse_one(path, options) for path in paths]


def parse_one(path: Path, options: ImportOptions) -> Draft:
    text = read_text(path)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        line, col = exc.position
        raise fail(
            path,
            f"line {line}, column {col + 1}",
            f"does not parse as XML: {exc.msg if hasattr(exc, 'msg') else exc}",
            "give the XML file the test runner wrote",
        ) from None
    if root.tag == "testsuites":
        suites = root.findall("testsuite")
    elif root.tag == "testsuite":
        suites = [root]
    else:
        raise fail(
            path,
            "line 1",
            f"root element is <{root.tag}>, expected <testsuites> or <testsuite>",
            "give a JUnit XML report",
        )
    passed = failed = errors = skipped = 0
    skipped_names: list[str] = []
    failed_names: list[str] = []
    duration = 0.0
    hosts: set[str] = set()
    stamps: list[str] = []
    for s, suite in enumerate(suites):
        host = suite.get("hostname")
        if host:
            hosts.add(host)
        if suite.get("timestamp"):
            stamps.append(parse_date(suite.get("timestamp"), path, f"testsuite[{s}] attribute timestamp") or "")
        try:
            duration += float(suite.get("time") or 0)
        except ValueError:
            raise fail(
                path,
                f"testsuite[{s}] attribute time",
                f"is {suite.get('time')!r}, expected seconds",
                "give the XML file the test runner wrote",
            ) from None
        for case in suite.iter("testcase"):
            name = "::".join(dict.fromkeys(p for p in (case.get("classname"), case.get("name")) if p))
            status = case.get("status")  # ctest writes run, fail, notrun, disabled
            if case.find("error") is not None:
                errors += 1
                failed_names.append(name)
            elif case.find("failure") is not None:
                failed += 1
                failed_names.append(name)
            elif case.find("skipped") is not None or status in ("notrun", "disabled"):
                skipped += 1
                skipped_names.append(name)
            else:
                passed += 1
    executed = passed + failed + errors
    gaps = ["JUnit XML records no commit"] if not options.source_sha else []
    if options.exit_code is None:
        gaps.append("exit code unknown: JUnit XML does not hold it (give --exit-code or use `ledger gate run`)")
    if not options.load_avg:
        gaps.append("machine load unknown: JUnit XML does not hold it (give --load or use `ledger gate run`)")
    stamps = [s for s in stamps if s]
    data = gate_fields(
        "junit",
        options,
        passed=passed,
        failed=failed,
        errors=errors,
        skipped=skipped,
        skipped_names=skipped_names,
        failed_names=failed_names,
        duration=duration,
        gaps=gaps,
    )
    if hosts or stamps:
        data["allocation"] = {
            "id": f"junit-{'-'.join(sorted(hosts)) or 'unknown-host'}-{min(stamps) if stamps else path.name}",
            "scheduler": "local",
            "hosts": sorted(hosts),
        }
    if stamps:
        data["observed_at"] = min(stamps)
    data["title"] = (
        f"{path.name}: {executed} executed, {passed} passed, {failed} failed, {errors} errors, {skipped} skipped"
    )
    return Draft("gate", {k: v for k, v in data.items() if v is not None}, str(path), 1)
