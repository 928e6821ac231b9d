"""Hostile input, generated: more than 1,000 malformed inputs (hypothesis) across every kind
and every input path: `ledger add` from YAML, JSON and JSON Lines, `--from-log`, and every
`ledger import` format. Each one is refused with a LedgerError (the CLI's exit 2) whose
problems name the file and the field or line; no other exception escapes, and nothing is
written.

The bulk runs in-process through the library entry points the CLI calls (read_items + add,
read_log + add, import_files); a sample goes through the real `ledger` command to show the
same refusals reach the user as exit 2 with no traceback.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from conftest import cli, git, run_ledger
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger.errors import LedgerError
from ledger.schema import Source
from ledger.schema.envelope import Allocation
from ledger.schema.registry import KINDS
from ledger.store import Ledger, Stamping, add
from ledger.store.ids import new_id
from ledger.store.inputs import read_items

HERE = Path(__file__).resolve().parent
SEEDS = HERE / "data"
IMPORTER_SEEDS = HERE.parent / "importers" / "data"
STAMP = Stamping(source=Source(sha="a" * 40), allocation=Allocation(id="fuzz-job"))
SETTINGS = dict(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# -- a ledger the examples run against ------------------------------------------------------


@pytest.fixture(scope="module")
def ledger_with_refs(tmp_path_factory) -> tuple[Ledger, dict[str, str]]:
    """A ledger holding one record of each kind a reference may point at."""
    root = tmp_path_factory.mktemp("fuzz") / "campaign"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    assert run_ledger(root, "init").returncode == 0
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init ledger")
    book = Ledger.open(root)
    from ledger.store import Item

    refs: dict[str, str] = {}
    refs["contract"] = add(book, "contract", [Item({"name": "fuzz", "model": "m"}, "<seed>", None)], STAMP)[0].id
    refs["environment"] = add(book, "environment", [Item({"hostname": "h"}, "<seed>", None)], STAMP)[0].id
    refs["measurement"] = add(book, "measurement", [Item({"samples": [1.0]}, "<seed>", None)], STAMP)[0].id
    refs["gate"] = add(book, "gate", [Item({"outcome": "no-tests"}, "<seed>", None)], STAMP)[0].id
    return book, refs


def valid_bodies(refs: dict[str, str]) -> dict[str, dict]:
    """One valid body per kind, every reference field filled with a record that exists."""
    m = refs["measurement"]
    return {
        "contract": {
            "name": "c-valid",
            "model": "LTX-2",
            "param_precision": "fp32",
            "warmup_steps": 10,
            "measured_steps": 20,
        },
        "environment": {
            "hostname": "gb200-a",
            "driver": "580.65",
            "env_flags": {"NCCL_DEBUG": "WARN"},
            "gpus": [{"index": 0, "name": "GB200"}],
        },
        "ceiling": {"device": "GB200", "environment": refs["environment"]},
        "flop-audit": {
            "contract": refs["contract"],
            "flop_per_sample": 353880819892224,
            "derivation": "analytic",
            "peak": {"name": "house-2450", "tflops_per_gpu": 2450.0},
        },
        "measurement": {
            "contract": refs["contract"],
            "samples": [0.7079, 0.7081, 0.7075],
            "world_size": 4,
            "local_batch": 2,
            "global_batch": 8,
            "title": "4x/B2",
            "command": "torchrun run_current.sh",
        },
        "sandwich": {
            "contract": refs["contract"],
            "control_a": m,
            "candidate": m,
            "control_b": m,
            "a_value": 1.0,
            "candidate_value": 0.99,
            "b_value": 1.0,
            "midpoint": 1.0,
            "delta": -0.01,
            "delta_percent": -1.0,
            "drift_percent": 0.0,
            "floor_percent": 0.5,
            "verdict": "neutral",
        },
        "decision": {
            "family": "FA4, regional compile",
            "verdict": "accepted",
            "evidence": [m],
            "where_to_continue": "run_current.sh",
        },
        "hypothesis": {"statement": "the fall is model residency", "status": "refuted", "evidence": [m]},
        "gate": {"command": "pytest -q", "exit_code": 0, "executed": 3, "passed": 3, "outcome": "pass"},
        "mutation": {
            "mutation": "drop the fence",
            "gate": refs["gate"],
            "built": True,
            "exit_code": 1,
            "detected_by": "test_fence",
        },
        "issue": {"number": 1044, "title": "re-gate 8x", "owner": "ana"},
        "note": {"body": "Historical 1x runs used BF16 master weights."},
        "memory-profile": {"interval_s": 0.5, "duration_s": 10.0, "samples": 20},
        "finding": {
            "finding": "F1",
            "review": "PR #1041 review",
            "claim": "the 16-thread figure is inside the spread of 20 threads",
            "verified_how": "re-ran both arms three times on one box",
            "verdict": "confirmed",
            "repair": "the table quotes a range",
            "evidence": [m],
        },
    }


#: Values no field of that kind accepts (each checked to be refused in test_seeds_are_valid...).
BAD_VALUES: dict[str, list[tuple[str, object]]] = {
    "contract": [("warmup_steps", -1), ("name", "")],
    "measurement": [("samples", [1.0, -0.5]), ("statistic", "p50"), ("outcome", "crashed"), ("world_size", 0)],
    "sandwich": [("verdict", "perhaps"), ("drift_percent", -1.0)],
    "decision": [("verdict", "maybe later")],
    "hypothesis": [("status", "probably")],
    "gate": [("outcome", "green"), ("passed", -1), ("executed", 7)],
    "mutation": [("mutation", "")],
    "issue": [("number", -3)],
    "memory-profile": [("interval_s", -0.5), ("samples", -1)],
    "flop-audit": [("flop_per_sample", -1)],
}
KIND_NAMES = sorted(KINDS)
FORMATS = ("json", "yaml", "jsonl")


def _property_schema(kind: str, name: str) -> dict:
    schema = KINDS[kind].model_json_schema()
    return schema.get("properties", {}).get(name, {})


def _accepts_object(prop: dict) -> bool:
    text = json.dumps(prop)
    return '"object"' in text or "$ref" in text or not prop or ("type" not in text)


def _wrong_type_value(kind: str, name: str, current: object) -> object:
    """A value of a type the field cannot take."""
    if isinstance(current, (dict, list)) or _accepts_object(_property_schema(kind, name)):
        return 12345 if isinstance(current, dict) else "not-a-list-or-mapping" if isinstance(current, list) else 12345
    return {"nested": [1, 2]}


# -- generated malformed records ------------------------------------------------------------


@st.composite
def malformed_record(draw, bodies: dict[str, dict]):
    """(kind, item, field-or-None): one record body made wrong in one way."""
    kind = draw(st.sampled_from(KIND_NAMES))
    body = copy.deepcopy(bodies[kind])
    model = KINDS[kind]
    required = [n for n, f in model.model_fields.items() if f.is_required() and n in body]
    refs = [f for f in model.REFERENCE_FIELDS if f in body]
    ways = ["unknown", "wrong_type", "wrong_kind", "not_mapping", "bad_envelope"]
    ways += ["missing"] * bool(required) + ["bad_value"] * bool(BAD_VALUES.get(kind)) + ["dangling"] * bool(refs)
    way = draw(st.sampled_from(ways))
    field: str | None
    if way == "missing":
        field = draw(st.sampled_from(required))
        del body[field]
    elif way == "unknown":
        field = draw(st.from_regex(r"[a-z][a-z_]{2,14}", fullmatch=True).filter(lambda n: n not in model.model_fields))
        body[field] = draw(st.one_of(st.integers(), st.text(max_size=20), st.lists(st.integers(), max_size=3)))
    elif way == "wrong_type":
        candidates = [n for n, v in body.items() if not (isinstance(v, dict) and not v)]
        field = draw(st.sampled_from(sorted(candidates)))
        body[field] = _wrong_type_value(kind, field, body[field])
    elif way == "bad_value":
        field, value = draw(st.sampled_from(BAD_VALUES[kind]))
        body[field] = value
    elif way == "dangling":
        field = draw(st.sampled_from(refs))
        missing = new_id()
        body[field] = [missing] if isinstance(body[field], list) else missing
    elif way == "wrong_kind":
        field = "kind"
        body["kind"] = draw(st.sampled_from([k for k in KIND_NAMES if k != kind]))
    elif way == "bad_envelope":
        field, value = draw(
            st.sampled_from(
                [
                    ("links", "https://wandb.ai/run"),
                    ("supersedes", "not-an-id"),
                    ("tags", {"a": 1}),
                    ("observed_at", "yesterday"),
                    ("attachments", ["log.txt"]),
                ]
            )
        )
        body[field] = value
    else:
        field = None
        body = draw(st.sampled_from([[1, 2, 3], "just a sentence", 42]))
    return kind, body, field, way


def _serialise(fmt: str, records: list[object]) -> str:
    if fmt == "jsonl":
        return "".join(json.dumps(r) + "\n" for r in records)
    if fmt == "json":
        return json.dumps(records[0], indent=2) + "\n"
    from io import StringIO

    from ruamel.yaml import YAML

    out = StringIO()
    YAML(typ="safe", pure=True).dump(records[0], out)
    return out.getvalue()


def _files(book: Ledger) -> list[str]:
    return sorted(str(p) for p in book.records_dir.rglob("*") if p.is_file())


def assert_refused(exc: LedgerError, name: str, *, field: str | None = None, line: int | None = None) -> None:
    """Every problem names the file; one names the field or line; no traceback in the message."""
    assert exc.problems, exc
    for p in exc.problems:
        assert p.file == name, (p, name)
        assert p.where or p.message, p
    wheres = " | ".join(p.where for p in exc.problems)
    assert any(p.where for p in exc.problems), exc.lines()
    if line is not None:
        assert f"line {line}" in wheres, (line, exc.lines())
    if field is not None:
        assert field in wheres or any(field in p.message for p in exc.problems), (field, exc.lines())
    assert "Traceback" not in "\n".join(exc.lines())


def test_seed_bodies_are_valid_and_bad_values_are_refused(ledger_with_refs) -> None:
    """The generator's starting points are valid, so every refusal below is the mutation's doing."""
    from ledger.store import prepare
    from ledger.store.inputs import Item

    book, refs = ledger_with_refs
    bodies = valid_bodies(refs)
    assert set(bodies) == set(KINDS)
    for kind, body in bodies.items():
        prepare(book, kind, [Item(body, "<seed>", 1)], STAMP)
    for kind, bad in BAD_VALUES.items():
        for field, value in bad:
            with pytest.raises(LedgerError):
                prepare(book, kind, [Item({**bodies[kind], field: value}, "<seed>", 1)], STAMP)


@pytest.mark.slow
@settings(max_examples=650, **SETTINGS)
@given(data=st.data())
def test_malformed_records_are_refused_naming_file_and_field(ledger_with_refs, tmp_path_factory, data) -> None:
    book, refs = ledger_with_refs
    bodies = valid_bodies(refs)
    kind, body, field, way = data.draw(malformed_record(bodies))
    fmt = data.draw(st.sampled_from(FORMATS))
    line = None
    if fmt == "jsonl":
        # The bad record among good ones: the error names its line.
        before_n = data.draw(st.integers(0, 3))
        after_n = data.draw(st.integers(0, 2))
        good = bodies[kind]
        records = [good] * before_n + [body] + [good] * after_n
        line = before_n + 1
    else:
        records = [body]
        if fmt == "json" and isinstance(body, dict):
            line = 1
    if not isinstance(body, dict) and fmt == "yaml" and isinstance(body, list):
        line = None  # a YAML list is read as many items, each a scalar
    folder = tmp_path_factory.mktemp("in", numbered=True)
    path = folder / f"input.{fmt}"
    path.write_text(_serialise(fmt, records), encoding="utf-8")
    before = _files(book)
    with pytest.raises(LedgerError) as caught:
        add(book, kind, read_items(path), STAMP)
    assert_refused(caught.value, str(path), field=field if way not in ("not_mapping",) else None, line=line)
    assert _files(book) == before


@st.composite
def broken_text(draw):
    """Text that does not parse as the format its suffix claims, or no number a record can hold."""
    fmt = draw(st.sampled_from(FORMATS))
    body = {"samples": [1.0, 1.1], "title": draw(st.text(alphabet="abcdef xyz", max_size=12))}
    text = _serialise(fmt, [body, body] if fmt == "jsonl" else [body])
    how = draw(st.sampled_from(["cut", "nan", "garbage", "tab"]))
    if how == "cut":
        end = text.rstrip().rfind("}" if fmt != "yaml" else "]")
        text = text[: draw(st.integers(1, max(1, end)))] if fmt != "yaml" else text.replace("[", "[[", 1)
    elif how == "nan":
        token = draw(st.sampled_from(["NaN", "Infinity", "-Infinity"] if fmt != "yaml" else [".nan", ".inf", "-.inf"]))
        text = text.replace("1.1", token, 1)
    elif how == "garbage":
        text = text + draw(st.sampled_from(["}}}\n", '{"a": \n', ": : :\n  - [\n"]))
    else:
        text = ("\t" + text) if fmt == "yaml" else text.replace("{", "{,", 1)
    return fmt, text


@settings(max_examples=150, **SETTINGS)
@given(case=broken_text())
def test_input_that_does_not_parse_is_refused_with_its_line(ledger_with_refs, tmp_path_factory, case) -> None:
    book, _ = ledger_with_refs
    fmt, text = case
    path = tmp_path_factory.mktemp("text", numbered=True) / f"input.{fmt}"
    path.write_text(text, encoding="utf-8")
    before = _files(book)
    with pytest.raises(LedgerError) as caught:
        add(book, "measurement", read_items(path), STAMP)
    assert_refused(caught.value, str(path))
    assert any("line" in p.where for p in caught.value.problems), caught.value.lines()
    assert _files(book) == before


# -- logs ---------------------------------------------------------------------------------------


@st.composite
def malformed_log(draw, bodies: dict[str, dict]):
    """(text, line, field): a run's output whose structured line at `line` is wrong."""
    noise = st.sampled_from(["[rank0]: step ok", "loss 0.123", "Epoch 1/10", "", "WARNING: clocks", "LEDGERS are fine"])
    lines = draw(st.lists(noise, min_size=0, max_size=6))
    good = {"samples": [0.70, 0.71, 0.72], "title": "ok"}
    for _ in range(draw(st.integers(0, 2))):
        lines.append("LEDGER " + json.dumps(good))
    how = draw(
        st.sampled_from(["field", "cut", "not_object", "bf16_median", "bf16_step", "bf16_truncated", "bf16_number"])
    )
    field = None
    prefix = draw(st.sampled_from(["", "[rank0]: ", "2026-07-22T10:00:00Z "]))
    if how == "field":
        kind, body, field, way = draw(
            malformed_record(bodies).filter(
                lambda c: (
                    c[0] == "measurement" and c[3] in ("missing", "unknown", "wrong_type", "bad_value", "dangling")
                )
            )
        )
        lines.append(prefix + "LEDGER " + json.dumps(body))
        bad_line = len(lines)
    elif how == "cut":
        text = json.dumps(good)
        lines.append(prefix + "LEDGER " + text[: draw(st.integers(1, len(text) - 1))])
        bad_line = len(lines)
        lines.append("after the cut")
    elif how == "not_object":
        # (`LEDGER [1, 2]` is noise by design: a tag is structured only when an object follows.)
        lines.append(
            prefix
            + "LEDGER "
            + draw(
                st.sampled_from(
                    ['{"samples": [NaN]}', '{"samples": [1.0, Infinity]}', '{"samples": "fast"}', '{"title": "x",}']
                )
            )
        )
        bad_line = len(lines)
    else:
        steps = draw(st.integers(3, 6))
        warm = 1
        times = [0.7 + i / 100 for i in range(steps)]
        for i, t in enumerate(times):
            lines.append(prefix + "BF16_STEP " + json.dumps({"step": i, "step_time_sec": t}))
        result = {
            "warmup_steps": warm,
            "measured_steps": steps - warm,
            "world_size": 4,
            "local_batch_size": 2,
            "gradient_accumulation_steps": 1,
            "internal_median_step_sec": sorted(times[warm:])[(steps - warm) // 2] if (steps - warm) % 2 else None,
        }
        result = {k: v for k, v in result.items() if v is not None}
        if how == "bf16_median":
            result["internal_median_step_sec"] = 99.0
            lines.append(prefix + "BF16_RESULT " + json.dumps(result))
            bad_line = len(lines)
        elif how == "bf16_step":
            at = len(lines) - draw(st.integers(1, steps)) + 0
            lines[at] = prefix + "BF16_STEP " + json.dumps({"step": 100, "step_time_sec": 0.7})
            lines.append(prefix + "BF16_RESULT " + json.dumps(result))
            bad_line = None
        elif how == "bf16_number":
            at = len(lines) - 1
            lines[at] = prefix + "BF16_STEP " + json.dumps({"step": steps - 1, "step_time_sec": "slow"})
            lines.append(prefix + "BF16_RESULT " + json.dumps(result))
            bad_line = at + 1
        else:
            bad_line = None  # a run with steps and no BF16_RESULT: the last structured line is named
    return "\n".join(lines) + "\n", bad_line, field


@settings(max_examples=220, **SETTINGS)
@given(data=st.data())
def test_malformed_logs_are_refused_naming_file_and_line(ledger_with_refs, tmp_path_factory, data) -> None:
    from ledger.store.runlog import read_log

    book, refs = ledger_with_refs
    text, line, field = data.draw(malformed_log(valid_bodies(refs)))
    path = tmp_path_factory.mktemp("log", numbered=True) / "run.log"
    path.write_text(text, encoding="utf-8")
    before = _files(book)
    with pytest.raises(LedgerError) as caught:
        add(book, "measurement", read_log(path), STAMP)
    assert_refused(caught.value, str(path), field=field, line=line)
    assert any("line" in p.where for p in caught.value.problems), caught.value.lines()
    assert _files(book) == before


# -- imports --------------------------------------------------------------------------------


def _json_at(doc, path):
    for part in path:
        doc = doc[part]
    return doc


#: format -> (seed files, the file mutated, key paths the importer requires, numeric leaves)
JSON_IMPORTS = {
    "hyperfine": (
        [IMPORTER_SEEDS / "hyperfine_sleep.json"],
        0,
        [("results",), ("results", 0, "command"), ("results", 1, "times")],
        [("results", 0, "times"), ("results", 1, "times")],
    ),
    "pyperf": ([SEEDS / "pyperf_track_memory.json"], 0, [("version",), ("benchmarks",), ("benchmarks", 0, "runs")], []),
    "pytest-benchmark": (
        [SEEDS / "pytest_benchmark_0030.json"],
        0,
        [("benchmarks",), ("machine_info",), ("benchmarks", 0, "stats")],
        [],
    ),
    "asv": (
        [SEEDS / "asv" / "benchmarks.json", SEEDS / "asv" / "fcf8c079-py2.7-Cython-numpy1.8.json"],
        1,
        [("version",), ("results",), ("params",)],
        [],
    ),
}
TEXT_IMPORTS = {
    "junit": IMPORTER_SEEDS / "pytest_mixed.xml",
    "ctest": IMPORTER_SEEDS / "ctest_mixed.txt",
    "mlperf": SEEDS / "mlperf_result_0.txt",
}


@st.composite
def malformed_import(draw):
    """(format, {name: bytes}, index of the bad file)."""
    fmt = draw(st.sampled_from(sorted(JSON_IMPORTS) + sorted(TEXT_IMPORTS)))
    if fmt in JSON_IMPORTS:
        seeds, bad, required, numeric = JSON_IMPORTS[fmt]
        files = {p.name: p.read_bytes() for p in seeds}
        name = seeds[bad].name
        text = files[name].decode("utf-8")
        how = draw(st.sampled_from(["cut", "drop", "retype"] + ["sample"] * bool(numeric)))
        if how == "cut":
            end = text.rstrip().rfind("}")
            files[name] = text[: draw(st.integers(1, end))].encode()
        else:
            doc = json.loads(text)
            if how == "sample":
                series = _json_at(doc, draw(st.sampled_from(numeric)))
                series[draw(st.integers(0, len(series) - 1))] = draw(st.sampled_from([-1.0, "slow", None, [1]]))
            else:
                path = draw(st.sampled_from(required))
                parent = _json_at(doc, path[:-1])
                if how == "drop":
                    del parent[path[-1]]
                else:
                    parent[path[-1]] = 42 if isinstance(parent[path[-1]], str) else "oops"
            files[name] = json.dumps(doc, indent=2).encode()
        return fmt, files, name
    seed = TEXT_IMPORTS[fmt]
    raw = seed.read_bytes()
    text = raw.decode("utf-8")
    if fmt == "junit":
        end = text.rfind("</testsuite")
        text = text[: draw(st.integers(1, end))]
    elif fmt == "ctest":
        how = draw(st.sampled_from(["status", "header", "summary"]))
        if how == "status":
            lines = text.splitlines(keepends=True)
            at = draw(st.sampled_from([i for i, s in enumerate(lines) if re.search(r"Test +#\d+:", s)]))
            lines[at] = re.sub(
                r"(\*\*\*)?(Passed|Failed|Skipped|Not Run \(Disabled\))",
                draw(st.sampled_from(["Exploded", "***Vanished"])),
                lines[at],
            )
            text = "".join(lines)
        elif how == "header":
            text = text.replace("Test project", "Project", 1)
        else:
            text = text.replace("1 tests failed", "3 tests failed", 1)
    else:
        lines = text.splitlines(keepends=True)
        candidates = [i for i, s in enumerate(lines) if ":::MLLOG {" in s]
        at = draw(st.sampled_from(candidates))
        how = draw(st.sampled_from(["cut", "time"]))
        start = lines[at].index("{")
        if how == "cut":
            lines[at] = lines[at][: start + draw(st.integers(1, len(lines[at].rstrip()) - start - 2))] + "\r\n"
        else:
            payload = json.loads(lines[at][start:])
            payload.pop("time_ms")
            lines[at] = lines[at][:start] + json.dumps(payload) + "\r\n"
        text = "".join(lines)
    return fmt, {seed.name: text.encode()}, seed.name


def test_import_seeds_import_cleanly(ledger_with_refs, tmp_path) -> None:
    from ledger.importers.base import import_files

    book, _ = ledger_with_refs
    for fmt, (seeds, *_rest) in JSON_IMPORTS.items():
        assert import_files(book, fmt, seeds, dry_run=True).records
    for fmt, seed in TEXT_IMPORTS.items():
        assert import_files(book, fmt, [seed], dry_run=True).records


@settings(max_examples=260, **SETTINGS)
@given(case=malformed_import())
def test_malformed_imports_are_refused_naming_file_and_place(ledger_with_refs, tmp_path_factory, case) -> None:
    from ledger.importers.base import import_files

    book, _ = ledger_with_refs
    fmt, files, bad = case
    folder = tmp_path_factory.mktemp("import", numbered=True)
    paths = []
    for name, content in files.items():
        (folder / name).write_bytes(content)
        paths.append(folder / name)
    before = _files(book)
    with pytest.raises(LedgerError) as caught:
        import_files(book, fmt, paths)
    assert_refused(caught.value, str(folder / bad))
    assert _files(book) == before


# -- the real command, on a sample ------------------------------------------------------------


#: Input paths whose first example went through `run_ledger` (a new `ledger` process) in
#: this process already.
_in_a_process: set[str] = set()


@pytest.mark.slow
@settings(max_examples=24, **SETTINGS)
@given(data=st.data())
def test_the_cli_exits_2_with_no_traceback_and_writes_nothing(ledger_with_refs, tmp_path_factory, data) -> None:
    """The first example of each input path (add, log, import) runs the installed command as
    a new process; the others its entry in this process (tests/conftest.py: cli: the same
    parsing, error printing and exit codes, without a new interpreter per example)."""
    book, refs = ledger_with_refs
    path_kind = data.draw(st.sampled_from(["add", "log", "import"]))
    run = cli
    if path_kind not in _in_a_process:
        _in_a_process.add(path_kind)
        run = run_ledger
    folder = tmp_path_factory.mktemp("cli", numbered=True)
    if path_kind == "add":
        kind, body, field, way = data.draw(malformed_record(valid_bodies(refs)))
        fmt = data.draw(st.sampled_from(FORMATS))
        target = folder / f"input.{fmt}"
        target.write_text(_serialise(fmt, [body]))
        args = ["add", kind, str(target)]
    elif path_kind == "log":
        text, _line, _field = data.draw(malformed_log(valid_bodies(refs)))
        target = folder / "run.log"
        target.write_text(text)
        args = ["add", "measurement", "--from-log", str(target)]
    else:
        fmt, files, bad = data.draw(malformed_import())
        for name, content in files.items():
            (folder / name).write_bytes(content)
        target = folder / bad
        args = ["import", fmt, *[str(folder / n) for n in files]]
    before = _files(book)
    result = run(book.root, *args, env={"LEDGER_DEBUG": ""})
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    assert str(target) in result.stderr, result.stderr
    assert _files(book) == before
