"""`build_site`: render the ledger into Markdown, run MkDocs on it, check what it built.

Generation (reading records, rendering templates, charts) and MkDocs are timed apart, so
a slow build says which side is slow. Both output folders hold a manifest of what ledger
wrote there (`site.owned`); ledger replaces and deletes only those files, so neither a
mistyped `docs_dir` nor a hostile mkdocs.yml can delete a user's own pages. Every path
the repository names resolves inside it, and no output folder overlaps the records,
specs, MkDocs' docs, the templates or `.git` (`output_folders`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import hashlib
import logging
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from jinja2 import TemplateError

from ..checks.registry import Active, configure, ledger_guidance
from ..config import CONFIG_NAME, inside
from ..errors import InputError, LedgerError, Problem
from ..git import Git
from ..store.ledger import without_cycle_collection
from . import (
    charts,
    decisions,
    home,
    hypotheses,
    investigation,
    linkcheck,
    mkdocs_run,
    page_rules,
    record_pages,
    repo_code,
    report,
    sandwiches,
    specs,
)
from .build_cache import BuildCache
from .commit_order import commit_order
from .context import Page, SiteData
from .forge import forge_of
from .owned import Owned, record_tree, replace_folder
from .publish import for_publication
from .specs import read_specs
from .templating import environment

#: Above this many pages the page rules run in a worker process beside MkDocs.
PARALLEL_RULES_PAGES = 300
#: progress(stage, done, total): called as work advances; total is None when unknown.
Progress = Callable[[str, int, "int | None"], None]


class SiteCheckFailed(LedgerError):
    """The site built, but MkDocs warned or a page or link rule failed under --strict."""

    exit_code = 1


@dataclass
class SiteResult:
    docs_dir: Path
    site_dir: Path | None
    pages: int
    records: int
    generation_s: float
    mkdocs_s: float = 0.0
    linkcheck_s: float = 0.0
    #: CPU time of the page rules (in a worker beside MkDocs on large sites), and how long
    #: the build waited for them after MkDocs finished.
    rules_s: float = 0.0
    rules_wait_s: float = 0.0
    #: Pages whose page-rule verdict a previous build remembered (unchanged text and evidence).
    rules_cached: int = 0
    #: MkDocs steps (a page's HTML, its search entries) answered from the cache (mkdocs_cache).
    mkdocs_cached: int = 0
    #: Chart drawings (SVG) a previous build drew from the same inputs (`charts.render`).
    charts_cached: int = 0
    #: Wall time of the whole build, start to finish.
    total_s: float = 0.0
    warnings: list[Problem] = field(default_factory=list)

    @property
    def index(self) -> Path | None:
        return self.site_dir / "index.html" if self.site_dir else None

    def as_dict(self) -> dict:
        return {
            "docs_dir": str(self.docs_dir),
            "site_dir": str(self.site_dir) if self.site_dir else None,
            "pages": self.pages,
            "records": self.records,
            "generation_s": round(self.generation_s, 3),
            "mkdocs_s": round(self.mkdocs_s, 3),
            "linkcheck_s": round(self.linkcheck_s, 3),
            "rules_s": round(self.rules_s, 3),
            "rules_wait_s": round(self.rules_wait_s, 3),
            "rules_cached": self.rules_cached,
            "mkdocs_cached": self.mkdocs_cached,
            "charts_cached": self.charts_cached,
            "total_s": round(self.total_s, 3),
            "warnings": [p.as_dict() for p in self.warnings],
        }


def _timed_rules(pages, active, spreads, prefix):

    started = time.perf_counter()
    problems = page_rules.check_each(pages, active, spreads, prefix)
    return problems, time.perf_counter() - started


def _noop(stage: str, done: int, total: int | None) -> None:
    return None


def load_data(ledger, progress: Progress = _noop, active: dict[str, Active] | None = None) -> SiteData:
    """The records, specs and guidance a build renders, built once. `active`: ledger.yaml's
    rules as configured (read from the ledger's config when not given)."""

    paths = list(ledger.iter_paths())
    records = []
    publish_hosts = ledger.config.site.publish_hosts
    with without_cycle_collection():
        for n, path in enumerate(paths, 1):
            # The site publishes a copy without hostnames, boot ids or local paths (site.publish).
            records.append(for_publication(ledger.load(path), publish_hosts))
            if n % 500 == 0 or n == len(paths):
                progress("reading records", n, len(paths))
    records.sort(key=lambda r: (r.when, r.id))
    specs = read_specs(ledger.specs_dir, ledger.root)
    title = ledger.config.site.title
    guidance = ledger_guidance(ledger, records, active)
    data = SiteData.build(title, records, specs, ledger.config.contract)
    data.guidance = guidance
    data.forge = forge_of(ledger.config.site.forge, ledger.config.site.forge_style)
    cell = (active or configure(ledger.config.rules, CONFIG_NAME)).get("cell-width")
    if cell is not None and cell.severity != "off":
        data.cell_limit = int(cell.params["max_chars"])
    data.cite(home.cited_ids(data))
    data.commit_order = commit_order(
        (ledger.root / ledger.config.source).resolve(),
        (m.source.sha for m in data.by_kind.get("measurement", []) if m.source),
    )
    return data


def render_pages(
    ledger,
    data: SiteData,
    write_bytes: Callable[[str, bytes], None],
    progress: Progress = _noop,
    directory_urls: bool = True,
    drawings: BuildCache | None = None,
):
    """Every page of the site, as Page objects (charts write their SVGs through write_bytes;
    `drawings` remembers them between builds, `charts.render`)."""

    templates = ledger.config.site.templates
    env = environment(ledger.root / templates if templates else None)

    def file_of(record) -> str:
        return ledger.path_for(record.kind, record.id).relative_to(ledger.root).as_posix()

    all_charts = charts.collect(data)
    sources = [
        home.render(data, env, all_charts),
        decisions.render(data, env),
        report.render(data, env),
        sandwiches.render(data, env),
        specs.render(data, env, directory_urls),
        hypotheses.render(data, env),
        charts.render(data, env, write_bytes, all_charts, directory_urls, drawings),
        investigation.render(data, env, write_bytes, directory_urls),
        record_pages.render(data, env, file_of),
    ]
    expected = len(data.cited) + sum(len(p) for p in data.listing_pages.values()) + 11
    n = 0
    for source in sources:
        try:
            for page in source:
                n += 1
                if n % 200 == 0:
                    progress("rendering pages", n, expected)
                yield page
        except TemplateError as exc:
            if not templates:
                raise
            # The repository's own template failed, or reached for what the sandbox refuses.
            # Jinja puts the template's file and line into the traceback.
            folder = str((ledger.root / templates).resolve())
            frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(folder)]
            where = f"{frames[-1].filename}:line {frames[-1].lineno}" if frames else str(templates)
            raise InputError(
                "a template of site.templates failed",
                [
                    Problem(
                        where,
                        "site.templates",
                        f"{type(exc).__name__}: {exc}",
                        "fix the template (it renders in Jinja's sandbox), or remove it",
                    )
                ],
            ) from None
    progress("rendering pages", n, n)


def _overlap(a: Path, b: Path) -> bool:
    return a == b or a in b.parents or b in a.parents


def output_folders(ledger, docs: Path, site: Path | None = None, mkdocs_docs: Path | None = None) -> None:
    """Refuse (InputError, exit 2) output folders that would write over what is not ledger's:
    the generated Markdown (`docs`) and the HTML (`site`) never hold the repository itself,
    and never contain or lie inside the records, the specs, the templates or a `.git`; the
    HTML never overlaps MkDocs' docs or the generated Markdown, and the generated Markdown
    never holds MkDocs' own docs (it may lie inside them: the embedded layout)."""

    root = ledger.root.resolve()
    guarded = {
        "records": inside(root, ledger.config.records, "records"),
        "specs": inside(root, ledger.config.specs, "specs"),
    }
    if ledger.config.site.templates:
        guarded["site.templates"] = inside(root, ledger.config.site.templates, "site.templates")
    outputs = [("site.docs_dir", docs)] + ([("site_dir", site)] if site is not None else [])
    problems = []
    for setting, folder in outputs:
        clashes = [name for name, path in guarded.items() if _overlap(folder, path)]
        if folder == root or folder in root.parents:
            clashes.insert(0, "the repository")
        if ".git" in folder.parts:
            clashes.append(".git")
        if setting == "site_dir":
            clashes += [
                n for n, p in (("MkDocs' docs_dir", mkdocs_docs), ("site.docs_dir", docs)) if p and _overlap(folder, p)
            ]
        elif mkdocs_docs is not None and folder != mkdocs_docs and folder in mkdocs_docs.parents:
            clashes.append("MkDocs' docs_dir")
        if clashes:
            problems.append(
                Problem(
                    str(folder),
                    setting,
                    f"is an output folder of `ledger site build` and would hold or lie inside {', '.join(clashes)}",
                    "give the output a folder of its own (defaults: .ledger-build/docs and site)",
                )
            )
    if problems:
        raise InputError("an output folder overlaps what ledger must not write", problems)


def generate(
    ledger,
    docs_dir: Path | None = None,
    progress: Progress = _noop,
    directory_urls: bool = True,
    active: dict[str, Active] | None = None,
    counts: dict[str, int] | None = None,
) -> tuple[list[Page], SiteData, Path]:
    """Render the Markdown into docs_dir (default: site.docs_dir of ledger.yaml). Only files
    ledger wrote there before are replaced or removed (`site.owned`). `counts`, when given,
    receives how many chart drawings were remembered (`charts_remembered`)."""
    docs = Path(docs_dir).resolve() if docs_dir else inside(ledger.root, ledger.config.site.docs_dir, "site.docs_dir")
    output_folders(ledger, docs)
    owned = Owned.open(docs, "site.docs_dir")
    data = load_data(ledger, progress, active)
    written: set[str] = set()

    def write(rel: str, content: bytes) -> None:
        written.add(rel)
        owned.write(rel, content)

    # The charts' drawings, remembered beside the build lock as the build's other caches are.
    drawings = BuildCache.open(_lock_path(docs).with_suffix(".chart-cache"), charts.drawing_settings())
    try:
        for name in ("ledger.css", "iframe-worker-shim.js"):
            write(mkdocs_run.ASSETS + name, _asset(ledger, name))
        pages = []
        for page in render_pages(ledger, data, write, progress, directory_urls, drawings):
            write(page.path, page.text.encode("utf-8"))
            pages.append(page)
        # Pages of records that left the cited set (or a renamed template) must not linger.
        owned.remove_stale(written)
        drawings.save()
    finally:
        drawings.close()
        owned.save()
    if counts is not None:
        counts["charts_remembered"] = drawings.hits
    return pages, data, docs


def _asset(ledger, name: str) -> bytes:
    """A packaged static file, or the user's copy from the templates folder (site.templates)."""

    templates = ledger.config.site.templates
    if templates:
        own = ledger.root / templates / "assets" / name
        if own.is_file():
            return own.read_bytes()
    return resources.files("ledger").joinpath("templates", "site", "assets", name).read_bytes()


def build_site(
    ledger,
    *,
    out: Path | str | None = None,
    strict: bool = True,
    progress: Progress | None = None,
    mkdocs: bool = True,
    repository_code: bool = False,
) -> SiteResult:
    """Generate the Markdown, build it with MkDocs into `out` (default: site_dir of mkdocs.yml),
    then check the page rules and the built HTML's links.

    With `strict`, a MkDocs warning, a page-rule violation or a broken link raises
    SiteCheckFailed (exit 1); without it they come back in `SiteResult.warnings`. Code the
    repository brings (templates, scripts, styles, MkDocs hooks) is refused unless
    `repository_code` (`--repository-code`, the person building's opt-in; `repo_code`).
    """
    progress = progress or _noop
    started = time.perf_counter()
    mkdocs_yml = inside(ledger.root, ledger.config.site.mkdocs_yml, "site.mkdocs_yml")
    if not mkdocs_yml.is_file():
        raise InputError(
            "no mkdocs.yml",
            [Problem(str(mkdocs_yml), "site.mkdocs_yml", "does not exist", "run `ledger init` to write one")],
        )
    # ledger.yaml's rules and mkdocs.yml are read once, here, and passed down.
    active = configure(ledger.config.rules, CONFIG_NAME)
    settings = mkdocs_run.load(mkdocs_yml)
    # The HTML goes where mkdocs.yml says, inside the repository; only the person building
    # can send it elsewhere (--out).
    target = Path(out).resolve() if out else mkdocs_run.site_dir(mkdocs_yml, ledger.root, settings)
    docs = inside(ledger.root, ledger.config.site.docs_dir, "site.docs_dir")
    mkdocs_docs = mkdocs_run.docs_dir(mkdocs_yml, ledger.root, settings)
    repo_code.guard(ledger, mkdocs_yml, settings, mkdocs_run.docs_prefix(docs, mkdocs_docs), repository_code)
    if mkdocs and mkdocs_docs.is_dir():
        mkdocs_run.refuse_links(mkdocs_docs)
    output_folders(ledger, docs, target, mkdocs_docs)
    # One build at a time writes the generated Markdown; the HTML is built into a fresh
    # folder beside the target and swapped into place, so a second build (or a reader of
    # the site) never sees a half-written folder.
    with _BuildLock(_lock_path(docs)):
        return _build_locked(ledger, mkdocs_yml, settings, active, target, strict, progress, mkdocs, started)


def _build_locked(ledger, mkdocs_yml, settings, active, target, strict, progress, mkdocs, started) -> SiteResult:

    begun = started
    mkdocs_docs = mkdocs_run.docs_dir(mkdocs_yml, ledger.root, settings)
    prefix = mkdocs_run.docs_prefix(inside(ledger.root, ledger.config.site.docs_dir, "site.docs_dir"), mkdocs_docs)
    if mkdocs:
        mkdocs_run.ensure_nav(mkdocs_yml, prefix, settings)
    directory_urls = mkdocs_run.directory_urls(mkdocs_yml, settings)
    counts: dict[str, int] = {}
    pages, data, docs = generate(ledger, progress=progress, directory_urls=directory_urls, active=active, counts=counts)
    rules = _Rules(pages, data, active, docs, os.path.relpath(docs, ledger.root) + "/")
    generation_s = time.perf_counter() - started
    result = SiteResult(docs, None, len(pages), len(data.records), generation_s)
    result.rules_cached = rules.cached
    result.charts_cached = counts.get("charts_remembered", 0)
    try:
        rules.start(parallel=mkdocs, progress=progress)
        if mkdocs:
            hidden = {prefix + p.path for p in pages if p.empty}
            cache_file = _lock_path(docs).with_suffix(".mkdocs-cache")
            _mkdocs_into(mkdocs_yml, target, strict, result, progress, hidden, cache_file)
        progress("page rules", 0, None)
        result.warnings[:0] = rules.finish(result)
    finally:
        rules.close()
    result.total_s = time.perf_counter() - begun
    if strict and result.warnings:
        raise SiteCheckFailed(f"the site has {len(result.warnings)} problem(s) under --strict", result.warnings)
    return result


class _Rules:
    """The page rules on every generated page. A page verified before, with the same text and
    evidence under the same rules and code, keeps its verdict (`build_cache`); the others are
    parsed with markdown-it (pure Python, ~10 ms a page), on a large site in worker processes,
    one per core but the one MkDocs builds on."""

    def __init__(self, pages: list[Page], data: SiteData, active: dict[str, Active], docs: Path, prefix: str):
        self.texts = [(p.path, p.text) for p in pages]
        self.spread = page_rules.spreads(data)
        self.active = active
        self.prefix = prefix
        self.cache = BuildCache.open(
            _lock_path(docs).with_suffix(".rules-cache"), page_rules.settings_of(active, prefix)
        )
        self.found, self.keys = page_rules.remembered(self.cache, self.texts, self.spread)
        self.todo = [i for i, f in enumerate(self.found) if f is None]
        self.cached = len(pages) - len(self.todo)
        self.pool: ProcessPoolExecutor | None = None
        self.chunks: list[list[int]] = []
        self.pending: list = []

    def _args(self, chunk: list[int]) -> tuple:
        return [self.texts[i] for i in chunk], self.active, self.spread, self.prefix

    def start(self, parallel: bool, progress: Progress) -> None:
        todo = self.todo
        if not (parallel and len(todo) > PARALLEL_RULES_PAGES):
            progress("page rules", 0, None)
            self.chunks = [todo]
            self.pending = [_timed_rules(*self._args(todo))]
            return
        workers = max(1, min((os.cpu_count() or 2) - 1, len(todo) // PARALLEL_RULES_PAGES))
        # Several chunks a worker, so one slow chunk (the report's long months) does not hold the rest.
        size = max(1, -(-len(todo) // (workers * 4)))
        self.chunks = [todo[i : i + size] for i in range(0, len(todo), size)]
        context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
        self.pool = ProcessPoolExecutor(workers, mp_context=context)
        self.pending = [self.pool.submit(_timed_rules, *self._args(chunk)) for chunk in self.chunks]

    def finish(self, result: SiteResult) -> list[Problem]:
        """Every page's problems, in page order; what was verified now is remembered."""
        started = time.perf_counter()
        for chunk, done in zip(self.chunks, self.pending):
            each, seconds = done.result() if self.pool is not None else done
            result.rules_s += seconds
            for i, problems in zip(chunk, each):
                self.found[i] = problems
                page_rules.remember(self.cache, self.keys[i], problems)
        if self.pool is not None:
            result.rules_wait_s = time.perf_counter() - started
        self.cache.save()
        return [p for problems in self.found for p in problems or ()]

    def close(self) -> None:
        self.cache.close()
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


def _mkdocs_into(
    mkdocs_yml: Path,
    target: Path,
    strict: bool,
    result: SiteResult,
    progress: Progress,
    hidden: AbstractSet[str] = frozenset(),
    cache_file: Path | None = None,
) -> None:
    """MkDocs into a fresh folder beside `target`, links checked there, then swapped into
    place; `hidden` pages (empty section indexes) are left out of the navigation; each page's
    HTML is remembered in `cache_file` (`mkdocs_cache`)."""

    progress("mkdocs build", 0, None)
    started = time.perf_counter()
    counts: dict[str, int] = {}
    target.parent.mkdir(parents=True, exist_ok=True)
    # A fresh folder ledger makes (never one of the same name a checkout brought).
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.building-", dir=target.parent))
    try:
        built, mk_warnings = mkdocs_run.build(
            mkdocs_yml, out=staging, strict=strict, hidden=hidden, cache_file=cache_file, counts=counts
        )
        result.mkdocs_cached = counts.get("remembered", 0)
        result.mkdocs_s = time.perf_counter() - started
        result.warnings.extend(mk_warnings)
        progress("checking links", 0, None)
        started = time.perf_counter()
        result.warnings.extend(linkcheck.check(built))
        result.linkcheck_s = time.perf_counter() - started
        record_tree(built)
        replace_folder(built, target, _exchange)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    result.site_dir = target


#: How long a build waits for another build of the same folder before it gives up (seconds).
LOCK_WAIT_S = 600.0


def _lock_path(docs: Path) -> Path:
    """The lock of one generated-docs folder: under the repository's git folder
    (`.git/ledger/`), else the user's cache folder; never the shared temporary folder, where
    any user could create the predictable name first (the build then waited forever)."""

    name = f"site-{hashlib.sha256(str(docs).encode()).hexdigest()[:16]}.lock"
    start = next(p for p in (docs, *docs.parents) if p.is_dir())
    common = Git(start).maybe("rev-parse", "--git-common-dir")
    if common:
        base = Path(common)
        folder = (base if base.is_absolute() else start / base) / "ledger"
    else:
        folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ledger"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


class _BuildLock:
    """An exclusive lock on a file (flock), held for one site build. Waits at most
    LOCK_WAIT_S for another build, then stops naming the lock file (never silently forever)."""

    def __init__(self, path: Path):
        self.path = path
        self.fd: int | None = None

    def __enter__(self):

        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError:
            return self  # an unusable lock file: build unlocked; the swap still keeps the site whole
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(self.fd)
                    self.fd = None
                    raise InputError(
                        "another site build holds the lock",
                        [
                            Problem(
                                str(self.path),
                                "lock",
                                f"another `ledger site build` of this folder held it for {LOCK_WAIT_S:.0f} s",
                                "wait for it to finish, or end it; the lock file goes with the process",
                            )
                        ],
                    ) from None
                time.sleep(0.2)

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing releases the lock
            self.fd = None


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""

    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    at_fdcwd, rename_exchange = -100, 2
    return fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


logging.getLogger(__name__).addHandler(logging.NullHandler())
