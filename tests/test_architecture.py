"""The architecture as a test: the layers of the package, read from the source's imports.

    cli  >  demo  >  site | sync  >  checks | collectors | importers  >  analysis | pages  >  store
         >  schema  >  config | git | redact | numbers | units | text  >  errors | version

A module may import from its own package, from any layer below its own, and never from a
layer above or from a sibling of the same layer (`a | b`: independent). The demo is a
library the `ledger demo` command calls, so it sits under the CLI; `sync` (`ledger push`:
fetch, merge, check, push) sits beside the site, above the checker it runs. What the
checker, the collectors and the importers share lies below them: reading input bytes
(gzip, JSON numbers: store.decode), a run's log (store.runlog), the measured source
checkout (store.sources); the analysis does no I/O (no git, no files). Every import
counts, also one inside a function, which is why a test keeps those to the heavy optional
packages. An import by name counts as well: `importlib.import_module("ledger.x")` or
`__import__` with a constant, and a string that names a ledger module (the registries such
calls read: the CLI's lazy commands, the importers' formats); the planted-violation test
proves it.

Nothing is mocked: the source is parsed with `ast`, and the torch test runs a fresh
interpreter on the real modules.
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "ledger"

#: top to bottom; the names in one tuple are independent of each other.
LAYERS: list[tuple[str, ...]] = [
    ("__main__",),
    ("cli",),
    ("demo",),
    ("site", "sync"),
    ("checks", "collectors", "importers"),
    ("analysis", "pages"),
    ("store",),
    ("schema",),
    ("config", "git", "redact", "numbers", "units", "text"),
    ("errors", "version", "templates"),
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}

#: packages heavy enough, and optional enough, to be imported where they are used.
LAZY_OK = (
    "torch",
    "matplotlib",
    "mkdocs",
    # MkDocs-Material's search plugin, whose per-page entries the site build remembers (site.mkdocs_cache).
    "material",
    # MkDocs' own gitignore matcher (its `not_in_nav`), loaded with MkDocs when a site builds.
    "pathspec",
    "pynvml",
    "flash_attn",
    # The markdown parser: the pre-push hook imports the page rules but parses markdown only
    # when a push brings pages.
    "markdown_it",
    # The collectors that import torch at their top: `ledger collect env` runs where torch is
    # not installed, so the command imports them only when it runs their subcommand.
    "ledger.collectors.attention",
    "ledger.collectors.ceiling",
    # python-ulid reads its version from importlib.metadata at import (40 ms of every process);
    # only a command that writes a record makes an id.
    "ulid",
)


def module_name(path: Path, src: Path = SRC) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(src: Path = SRC) -> dict[str, Path]:
    return {module_name(p, src): p for p in sorted((src / "ledger").rglob("*.py"))}


#: A string that names a ledger module ("ledger.cli.main", "ledger.cli.add:command"): a
#: registry of what is imported later by name (the CLI's lazy commands, the importers).
MODULE_STRING = re.compile(r"ledger(\.[A-Za-z_][A-Za-z0-9_]*)+(:[A-Za-z_][A-Za-z0-9_.]*)?")


class Imports(ast.NodeVisitor):
    """Every import of a module: (imported name, line, inside a function or class?, only for
    type checkers?). `from a import b` is reported as `a.b`: a module, or an attribute of `a`.
    A call `importlib.import_module("a.b")` or `__import__("a.b")` with a constant name is an
    import of `a.b`; `named` holds the other strings that name a ledger module, the
    registries such calls read their names from."""

    def __init__(self, name: str, is_package: bool) -> None:
        self.package = name if is_package else name.rpartition(".")[0]
        self.found: list[tuple[str, int, bool, bool]] = []
        self.named: list[tuple[str, int]] = []
        self.depth = 0
        self.typing_only = False

    def visit_If(self, node: ast.If) -> None:
        if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            self.typing_only = True
            for child in node.body:
                self.visit(child)
            self.typing_only = False
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def _nested(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = _nested

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.found.append((alias.name, node.lineno, self.depth > 0, self.typing_only))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.package.split(".")[: len(self.package.split(".")) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        for alias in node.names:
            name = target if alias.name == "*" else f"{target}.{alias.name}"
            self.found.append((name, node.lineno, self.depth > 0, self.typing_only))

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        first = node.args[0] if node.args else None
        if (
            called in ("import_module", "__import__")
            and isinstance(first, ast.Constant)
            and isinstance(first.value, str)
        ):
            target = first.value
            if target.startswith("."):  # import_module(".x", __package__)
                level = len(target) - len(target.lstrip("."))
                base = self.package.split(".")[: len(self.package.split(".")) - level + 1]
                target = ".".join(base + [target.lstrip(".")])
            self.found.append((target, node.lineno, self.depth > 0, self.typing_only))
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and MODULE_STRING.fullmatch(node.value):
            self.named.append((node.value.partition(":")[0], node.lineno))


def visit(name: str, path: Path) -> Imports:
    return _visit(name, path.name == "__init__.py", path.read_text(encoding="utf-8"))


@functools.cache
def _visit(name: str, is_package: bool, text: str) -> Imports:
    # Parsed once per module and text: a dozen tests walk the same 160 files, and the copies
    # the planted-import tests make hold the same texts. Callers only read the result.
    visitor = Imports(name, is_package)
    visitor.visit(ast.parse(text, filename=name))
    return visitor


def imports_of(name: str, path: Path) -> list[tuple[str, int, bool, bool]]:
    return visit(name, path).found


def resolve(target: str, known: dict[str, Path]) -> str | None:
    """The ledger module an import names (an attribute import resolves to its module)."""
    while target and target not in known:
        if "." not in target:
            return None
        target = target.rpartition(".")[0]
    return target or None


def part_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else None


def graph(
    *, typing_only: bool = True, strings: bool = True, known: dict[str, Path] | None = None
) -> dict[str, dict[str, int]]:
    """module -> {ledger module it imports: line}; with typing_only=False, without the
    imports under `if TYPE_CHECKING:` (they never run); with strings=False, without the
    modules only named in strings (imported later, by name)."""
    known = known if known is not None else modules()
    edges: dict[str, dict[str, int]] = defaultdict(dict)
    for name, path in known.items():
        found = visit(name, path)
        targets = [(t, line) for t, line, _, for_types in found.found if typing_only or not for_types]
        if strings:
            targets += [(t, line) for t, line in found.named if resolve(t, known) not in (None, "ledger")]
        for target, line in targets:
            if not target.startswith("ledger"):
                continue
            resolved = resolve(target, known)
            if resolved and resolved != name:
                edges[name].setdefault(resolved, line)
    return edges


def layer_violations(edges: dict[str, dict[str, int]]) -> list[str]:
    wrong = []
    for name, targets in edges.items():
        here = part_of(name)
        if here is None:  # ledger/__init__.py: the public API re-exports the store and schema
            wrong.extend(
                f"{name}:{line} imports {t} (the package root re-exports only the store and below)"
                for t, line in targets.items()
                if RANK.get(part_of(t) or "errors", 0) < RANK["store"]
            )
            continue
        for target, line in targets.items():
            there = part_of(target)
            if there is None:
                wrong.append(f"{name}:{line} imports the package root `ledger` (import the module that defines it)")
            elif there != here and RANK[there] <= RANK[here]:
                how = "a sibling" if RANK[there] == RANK[here] else "a layer above"
                wrong.append(f"{name}:{line} imports {target}, {how} ({here} -> {there})")
    return wrong


def test_every_part_of_the_package_has_a_layer() -> None:
    parts = {part_of(name) for name in modules()} - {None}
    assert parts - set(RANK) == set(), "a new part of ledger needs its place in LAYERS (and in the docstring)"


def test_layers_import_only_downwards() -> None:
    wrong = layer_violations(graph())
    assert wrong == [], "\n".join(wrong)


PLANTED = {
    "call": 'import importlib\n\n\ndef later():\n    return importlib.import_module("ledger.cli.main")\n',
    "dunder": 'cli = __import__("ledger.cli.main")\n',
    "relative": 'import importlib\n\nm = importlib.import_module("..site.builder", __package__)\n',
    "registry": 'COMMANDS = {"main": "ledger.cli.main:cli"}\n',
}


@pytest.mark.parametrize("way", sorted(PLANTED))
def test_an_import_by_name_is_held_to_the_layers(tmp_path: Path, way: str) -> None:
    """A module of `pages` (low) that reaches up by a string, planted in a copy of the
    package: the layer test names it; the same copy without it passes."""
    src = tmp_path / "src"
    for path in modules().values():
        copy = src / path.relative_to(SRC)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(path.read_bytes())
    assert layer_violations(graph(known=modules(src))) == []
    (src / "ledger" / "pages" / "planted.py").write_text(PLANTED[way], encoding="utf-8")
    wrong = layer_violations(graph(known=modules(src)))
    expected = "ledger.site.builder" if way == "relative" else "ledger.cli.main"
    assert len(wrong) == 1 and wrong[0].startswith("ledger.pages.planted:"), wrong
    assert f"imports {expected}, a layer above (pages -> {expected.split('.')[1]})" in wrong[0], wrong


def test_no_import_cycles() -> None:
    """No two modules need each other at run time, not even through imports inside functions."""
    edges = graph(typing_only=False, strings=False)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in edges.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in modules():
        if name not in index:
            visit(name)
    assert cycles == [], "\n".join(" <-> ".join(c) for c in cycles)


#: What the analysis (arithmetic over records) never imports: it reads no files and runs no git.
IO_MODULES = (
    "os",
    "io",
    "pathlib",
    "shutil",
    "subprocess",
    "ledger.git",
    "ledger.store.ledger",
    "ledger.store.sources",
)


def test_the_analysis_does_no_io() -> None:
    wrong = []
    for name, path in modules().items():
        if part_of(name) != "analysis":
            continue
        for target, line, _, _ in imports_of(name, path):
            if any(target == m or target.startswith(m + ".") for m in IO_MODULES):
                wrong.append(f"{path.relative_to(SRC)}:{line} imports {target}")
    assert wrong == [], "\n".join(wrong)


#: Basenames two library modules still share, each for a different job (issue 21): a ratchet,
#: never to grow. The CLI's modules are named after their commands and are not counted.
SHARED_BASENAMES = {"guidance", "registry", "report", "pages"}


def test_a_basename_names_one_job() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for name in modules():
        parts = name.split(".")
        if len(parts) > 2 and parts[1] != "cli":
            where[parts[-1]].append(name)
    where = {base: names for base, names in where.items() if len(names) > 1 or base in RANK}
    shared = {
        base for base, names in where.items() if len(names) > 1 or (base in RANK and base != names[0].split(".")[1])
    }
    assert shared <= SHARED_BASENAMES, {b: where[b] for b in shared - SHARED_BASENAMES}


def test_imports_at_module_top() -> None:
    """Only the heavy optional packages (torch, matplotlib, mkdocs, NVML) are imported inside functions."""
    wrong = []
    for name, path in modules().items():
        for target, line, nested, _ in imports_of(name, path):
            if nested and not target.startswith(LAZY_OK):
                wrong.append(f"{path.relative_to(SRC)}:{line} imports {target} inside a function")
    assert sorted(set(wrong)) == [], "\n".join(sorted(set(wrong)))


@pytest.mark.parametrize("part", ["checks", "site", "store"])
def test_checker_site_and_store_never_import_torch_or_the_collectors(part: str) -> None:
    for name, path in modules().items():
        if part_of(name) != part:
            continue
        for target, line, _, _ in imports_of(name, path):
            assert not target.startswith(("torch", "ledger.collectors")), f"{name}:{line} imports {target}"


def test_the_core_commands_load_without_torch() -> None:
    code = (
        "import sys, ledger, ledger.cli.main, ledger.cli.add, ledger.cli.check, ledger.cli.hook, "
        "ledger.checks.runner, ledger.store.ledger, ledger.site.builder, ledger.importers.base; "
        "bad = sorted(m for m in sys.modules if m.startswith(('torch', 'ledger.collectors'))); print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
