"""Gate records from ctest's console output (`ctest ... > ctest.log`).

Reads each `N/M Test #K: name ... Passed|***Failed|***Skipped|***Not Run` line and the
summary. "No tests were found!!!" is outcome `no-tests` even though ctest exits 0 then.
For `ctest --output-junit FILE` give that file to `ledger import junit`.
"""

from __future__ import annotations

import re
from pathlib import Path

from .base import Draft, ImportOptions, fail, read_text, shown
from .junit import gate_fields

FMT = "ctest output"
_RESULT_RE = re.compile(
    r"^\s*(?:\d+/\d+\s+)?Test\s+#(?P<number>\d+):\s+(?P<name>\S+)\s+\.*\s*(?P<status>\*{0,3}[A-Za-z][^\d]*?)\s+(?P<time>[\d.]+)\s+sec"
)
_SUMMARY_RE = re.compile(r"^\s*\d+% tests passed, (?P<failed>\d+) tests? failed out of (?P<total>\d+)")
_TOTAL_TIME_RE = re.compile(r"^Total Test time \(real\) =\s*(?P<t>[\d.]+) sec")


def parse(paths: list[Path], options: ImportOptions) -> list[Draft]:
    return [parse_one(path, options) for path in paths]


def parse_one(path: Path, options: ImportOptions) -> Draft:
    lines = read_text(path).splitlines()
    if not any(line.startswith("Test project ") for line in lines):
        raise fail(
            path,
            "line 1",
            "no `Test project` line",
            "give the console output of ctest, unchanged (or its --output-junit file to `ledger import junit`)",
        )
    # `ctest --repeat until-pass:N` (or until-fail, after-timeout) prints a test's later attempts
    # without the `N/M` prefix; its result is its last attempt's, as ctest's summary counts it.
    final: dict[str, tuple[int, str, str]] = {}  # test number -> (line, status, name)
    attempts: dict[str, int] = {}
    duration: float | None = None
    summary: tuple[int, int, int] | None = None
    no_tests = False
    for lineno, line in enumerate(lines, start=1):
        if line.strip() == "No tests were found!!!":
            no_tests = True
        if (m := _RESULT_RE.match(line)) is not None:
            number = m.group("number")
            final[number] = (lineno, m.group("status"), m.group("name"))
            attempts[number] = attempts.get(number, 0) + 1
        elif (m := _SUMMARY_RE.match(line)) is not None:
            summary = _summary(path, lineno, m)
        elif (m := _TOTAL_TIME_RE.match(line)) is not None:
            duration = float(m.group("t"))
    passed, failed, skipped, skipped_names, failed_names = _tally(path, final)
    errors = 0
    retried = [final[k][2] for k, n in attempts.items() if n > 1]
    executed = passed + failed + errors
    if summary is not None:
        lineno, s_failed, s_total = summary
        # ctest's "out of N" counts tests that ran, skipped ones included, disabled ones not;
        # a disagreement with the per-test lines means the output was cut or edited.
        if s_failed != failed:
            raise fail(
                path,
                f"line {lineno}",
                f"summary says {s_failed} failed but {failed} test lines failed",
                "give the complete console output of ctest",
            )
    elif not no_tests and executed == 0 and skipped == 0:
        raise fail(
            path,
            "line 1",
            "no test result lines and no `No tests were found` line",
            "give the complete console output of ctest",
        )
    gaps = ["ctest output records no commit"] if not options.source_sha else []
    if options.exit_code is None:
        gaps.append("exit code unknown: give --exit-code or use `ledger gate run`")
    if not options.load_avg:
        gaps.append("machine load unknown: give --load or use `ledger gate run`")
    data = gate_fields(
        "ctest",
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
    if retried:
        data.setdefault("extra", {})["retried_names"] = retried
        passed_on_retry = [
            final[k][2] for k, n in attempts.items() if n > 1 and final[k][1].strip("* ").lower() == "passed"
        ]
        if passed_on_retry:
            data["extra"]["flaky_names"] = passed_on_retry
    data["title"] = f"{path.name}: " + (
        "no tests were found"
        if no_tests
        else f"{executed} executed, {passed} passed, {failed} failed, {skipped} skipped"
    )
    return Draft("gate", {k: v for k, v in data.items() if v is not None}, str(path), 1)


def _summary(path: Path, lineno: int, m: re.Match) -> tuple[int, int, int]:
    """ctest's `N% tests passed, F tests failed out of T` line: (its line, F, T)."""
    if max(len(m.group("failed")), len(m.group("total"))) > 18:
        raise fail(
            path,
            f"line {lineno}",
            "holds a test count of more than 18 digits",
            "give the console output of ctest, unchanged",
        )
    return lineno, int(m.group("failed")), int(m.group("total"))


def _tally(path: Path, final: dict[str, tuple[int, str, str]]) -> tuple[int, int, int, list[str], list[str]]:
    """(passed, failed, skipped, skipped names, failed names) of each test's last attempt."""
    passed = failed = skipped = 0
    skipped_names: list[str] = []
    failed_names: list[str] = []
    for lineno, written, name in final.values():
        status = written.strip("* ").lower()
        if status == "passed":
            passed += 1
        elif status.startswith("not run") or status.startswith("skipped"):
            skipped += 1
            skipped_names.append(name)
        elif (
            status.startswith("failed")
            or status.startswith("exception")
            or "timeout" in status
            or status.startswith("subprocess")
        ):
            failed += 1
            failed_names.append(name)
        else:
            raise fail(
                path,
                f"line {lineno}",
                f"unknown test status {shown(written.strip())}",
                "give the console output of ctest, unchanged",
            )
    return passed, failed, skipped, skipped_names, failed_names
