"""Rule ids are declared once, in the rule families' `RULES` (ledger.checks.registry), and
checked: emitting an undeclared id is a programming error that raises, never dropped like a
rule the user turned off; every id the source names is a declared one; and only what the
schema says of a record becomes its `schema-valid` violation, not a bug in the validator."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ledger.checks.findings import Findings
from ledger.checks.records import FileRules, inspect_file
from ledger.checks.registry import RULES, UnknownRule, configure
from ledger.config import Config

SRC = Path(__file__).resolve().parents[2] / "src" / "ledger"


def findings(**rules: dict) -> Findings:
    return Findings("all", Config(), configure(rules))


def test_an_undeclared_rule_id_raises_and_a_rule_turned_off_is_dropped() -> None:
    f = findings(**{"sha-abbreviated": {"severity": "off"}})
    f.emit("sha-abbreviated", "records/note/01/x.json", "abbreviated")
    assert f.result.violations == [] and not f.on("sha-abbreviated")
    with pytest.raises(UnknownRule, match="sha-abreviated"):
        f.emit("sha-abreviated", "records/note/01/x.json", "a typo of the rule id")
    with pytest.raises(UnknownRule):
        f.on("no-such-rule")
    f.emit("sha-resolves", "records/note/01/x.json", "does not resolve", field="source.sha")
    [v] = f.result.violations
    assert (v.rule, v.file, v.field, v.fix) == (
        "sha-resolves",
        "records/note/01/x.json",
        "source.sha",
        RULES["sha-resolves"].fix,
    )


#: Calls whose first (or, for `_v`, second) constant argument is a rule id.
ID_CALLS = {"emit": 0, "on": 0, "params": 0, "_v": 1, "rule": 0}


def named_ids() -> list[tuple[str, int, str]]:
    """(file, line, id) of every constant rule id the source passes to an emit, an `on`, a
    `params` or a violation, or tests with `"id" in active`."""
    out = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            arg = None
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                at = ID_CALLS.get(name)
                if at is not None and len(node.args) > at:
                    arg = node.args[at]
            elif isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.NotIn)):
                target = node.comparators[0]
                label = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                if label == "active":
                    arg = node.left
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and "-" in arg.value:
                out.append((str(path.relative_to(SRC)), node.lineno, arg.value))
    return out


def test_every_rule_id_the_source_names_is_declared() -> None:
    found = named_ids()
    assert len({i for _, _, i in found}) > 30  # the scan sees the rules
    unknown = [f"{file}:{line} names {rule_id!r}" for file, line, rule_id in found if rule_id not in RULES]
    assert unknown == [], "\n".join(unknown)


class _Broken(dict):
    """A record whose reading fails as a bug in the validator would."""

    def get(self, *args, **kwargs):
        raise RuntimeError("a bug in the validator")


def test_a_validator_bug_raises_and_is_not_the_users_schema_violation() -> None:
    rules = FileRules({"schema-valid": "error"}, {"schema-valid": {}}, {"schema-valid": RULES["schema-valid"].fix})
    from ledger.checks import records

    with pytest.raises(RuntimeError, match="a bug in the validator"):
        records._validate_record("records/note/01/x.json", _Broken(kind="note"), rules, [])
    # What the schema says of the data is the user's: a note without a body.
    found, info = inspect_file("note/01/01JAAAAAAAAAAAAAAAAAAAAAAA.json", b'{"kind": "note"}\n', rules)
    assert info is None
    assert [v.rule for v in found] == ["schema-valid"] * len(found) and found
    assert all(
        v.file == "note/01/01JAAAAAAAAAAAAAAAAAAAAAAA.json" and v.fix == RULES["schema-valid"].fix for v in found
    )


def test_the_guidance_and_admission_loaders_skip_only_a_bad_record_and_raise_on_a_bug(
    tmp_path: Path, book, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record the loaders cannot read is left to schema-valid (None, or skipped); a bug in
    the validator under them raises instead of reading as that record's fault."""
    from ledger.checks import admission, guidance
    from ledger.store import Ledger

    for name, content in {
        "list": b"[1]",
        "text": b"not json",
        "deep": b"[" * 100_000,
        "note": b'{"kind": "note"}',
    }.items():
        (tmp_path / f"{name}.json").write_bytes(content)
        assert guidance.load_model(tmp_path, f"{name}.json") is None, name
    assert guidance.load_model(tmp_path, "missing.json") is None

    env = book.records_dir / "environment" / "01" / "01JAAAAAAAAAAAAAAAAAAAAAAA.json"
    env.parent.mkdir(parents=True)
    env.write_bytes(b'{"kind": "environment"}\n')
    gate = admission.Admission(book)
    assert gate.environments() == []

    def bug(data: object) -> None:
        raise RuntimeError("a bug in the validator")

    monkeypatch.setattr(guidance, "validate_record", bug)
    with pytest.raises(RuntimeError, match="a bug in the validator"):
        guidance.load_model(tmp_path, "note.json")
    monkeypatch.setattr(Ledger, "load", lambda self, path: bug(path))
    with pytest.raises(RuntimeError, match="a bug in the validator"):
        gate.environments()
