"""`build_site`: render the ledger into Markdown, run MkDocs on it, check what it built.

Generation (reading records, rendering templates, charts) and MkDocs are timed apart, so
a slow build says which side is slow. The generated folder holds a marker file; ledger
only ever cleans a folder that carries it, so a mistyped `docs_dir` never deletes a
user's own pages.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError, LedgerError, Problem
from . import charts, decisions, home, hypotheses, linkcheck, mkdocs_run, records, report, sandwiches, specs
from . import selfcheck as page_rules
from .context import Page, SiteData
from .publish import for_publication
from .specs import read_specs
from .templating import environment

MARKER = ".ledger-generated"
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
            "total_s": round(self.total_s, 3),
            "warnings": [p.as_dict() for p in self.warnings],
        }


def _timed_rules(pages, rules, spreads, prefix):

    started = time.perf_counter()
    problems = page_rules.check_texts(pages, rules, spreads, prefix)
    return problems, time.perf_counter() - started


def _noop(stage: str, done: int, total: int | None) -> None:
    return None


def load_data(ledger, progress: Progress = _noop) -> SiteData:

    paths = list(ledger.iter_paths())
    records = []
    publish_hosts = ledger.config.site.publish_hosts
    for n, path in enumerate(paths, 1):
        # The site publishes a copy without hostnames, boot ids or local paths (site.publish).
        records.append(for_publication(ledger.load(path), publish_hosts))
        if n % 500 == 0 or n == len(paths):
            progress("reading records", n, len(paths))
    records.sort(key=lambda r: (r.when, r.id))
    specs = read_specs(ledger.specs_dir, ledger.root)
    title = ledger.config.site.title
    data = SiteData.build(title, records, specs, ledger.config.contract)
    extra = home.cited_ids(data)
    if extra - data.cited:
        data = SiteData.build(title, records, specs, ledger.config.contract, extra_cited=extra)
    return data


def render_pages(
    ledger,
    data: SiteData,
    write_bytes: Callable[[str, bytes], None],
    progress: Progress = _noop,
    directory_urls: bool = True,
):
    """Every page of the site, as Page objects (charts write their SVGs through write_bytes)."""

    templates = ledger.config.site.templates
    env = environment(ledger.root / templates if templates else None)

    def file_of(record) -> str:
        return ledger.path_for(record.kind, record.id).relative_to(ledger.root).as_posix()

    sources = [
        home.render(data, env),
        decisions.render(data, env),
        report.render(data, env),
        sandwiches.render(data, env),
        specs.render(data, env, directory_urls),
        hypotheses.render(data, env),
        charts.render(data, env, write_bytes),
        records.render(data, env, file_of),
    ]
    expected = len(data.cited) + sum(len(p) for p in data.listing_pages.values()) + 8
    n = 0
    for source in sources:
        for page in source:
            n += 1
            if n % 200 == 0:
                progress("rendering pages", n, expected)
            yield page
    progress("rendering pages", n, n)


def _prepare_folder(folder: Path) -> None:
    if folder.exists() and any(folder.iterdir()) and not (folder / MARKER).exists():
        raise InputError(
            "docs folder is not ledger's",
            [
                Problem(
                    str(folder),
                    "site.docs_dir",
                    "is not empty and was not generated by ledger, so ledger will not clean it",
                    "point site.docs_dir in ledger.yaml at a folder of its own (default .ledger-build/docs)",
                )
            ],
        )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MARKER).write_text(
        "Generated by `ledger site build`; everything here is rewritten on each build.\n", encoding="utf-8"
    )


def generate(
    ledger, docs_dir: Path | None = None, progress: Progress = _noop, directory_urls: bool = True
) -> tuple[list[Page], SiteData, Path]:
    """Render the Markdown into docs_dir (default: site.docs_dir of ledger.yaml)."""
    docs = (docs_dir or ledger.root / ledger.config.site.docs_dir).resolve()
    _prepare_folder(docs)
    data = load_data(ledger, progress)
    written: set[str] = {MARKER}

    def write(rel: str, content: bytes) -> None:
        path = docs / rel
        written.add(rel)
        # Unchanged files are left alone so their mtimes (and MkDocs' dirty builds) stay put.
        if path.exists() and path.stat().st_size == len(content) and path.read_bytes() == content:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(content)
        os.replace(tmp, path)

    pages = []
    for page in render_pages(ledger, data, write, progress, directory_urls):
        write(page.path, page.text.encode("utf-8"))
        pages.append(page)
    # Pages of records that left the cited set (or a renamed template) must not linger.
    for path in sorted(docs.rglob("*"), reverse=True):
        rel = path.relative_to(docs).as_posix()
        if path.is_file() and rel not in written:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    return pages, data, docs


def _docs_prefix(ledger, docs: Path, mkdocs_docs: Path) -> str:
    try:
        rel = docs.relative_to(mkdocs_docs.resolve()).as_posix()
    except ValueError:
        return ""
    return "" if rel == "." else rel + "/"


def build_site(
    ledger, *, out: Path | str | None = None, strict: bool = True, progress: Progress | None = None, mkdocs: bool = True
) -> SiteResult:
    """Generate the Markdown, build it with MkDocs into `out` (default: site_dir of mkdocs.yml),
    then check the page rules and the built HTML's links.

    With `strict`, a MkDocs warning, a page-rule violation or a broken link raises
    SiteCheckFailed (exit 1); without it they come back in `SiteResult.warnings`.
    """

    progress = progress or _noop
    started = begun = time.perf_counter()
    mkdocs_yml = ledger.root / ledger.config.site.mkdocs_yml
    if not mkdocs_yml.is_file():
        raise InputError(
            "no mkdocs.yml",
            [Problem(str(mkdocs_yml), "site.mkdocs_yml", "does not exist", "run `ledger init` to write one")],
        )
    directory_urls = mkdocs_run.directory_urls(mkdocs_yml)
    pages, data, docs = generate(ledger, progress=progress, directory_urls=directory_urls)
    mkdocs_docs = mkdocs_run.docs_dir(mkdocs_yml)
    prefix = _docs_prefix(ledger, docs, mkdocs_docs)
    rules_args = (
        [(p.path, p.text) for p in pages],
        ledger.config.rules,
        page_rules.spreads(data),
        os.path.relpath(docs, ledger.root) + "/",
    )
    generation_s = time.perf_counter() - started
    result = SiteResult(docs, None, len(pages), len(data.records), generation_s)
    # The page rules parse every page with markdown-it (pure Python, ~10 ms a page), so on
    # a large site they run in a second process while MkDocs builds in this one.
    pool = None
    if mkdocs and len(pages) > PARALLEL_RULES_PAGES:
        pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork" if os.name == "posix" else "spawn"))
        pending = pool.submit(_timed_rules, *rules_args)
    else:
        progress("page rules", 0, None)
        rule_problems, result.rules_s = _timed_rules(*rules_args)
        result.warnings.extend(rule_problems)
    try:
        if mkdocs:
            mkdocs_run.ensure_nav(mkdocs_yml, prefix)
            progress("mkdocs build", 0, None)
            started = time.perf_counter()
            site_dir, mk_warnings = mkdocs_run.build(
                mkdocs_yml, out=Path(out).resolve() if out else None, strict=strict
            )
            result.mkdocs_s = time.perf_counter() - started
            result.site_dir = site_dir
            result.warnings.extend(mk_warnings)
            progress("checking links", 0, None)
            started = time.perf_counter()
            result.warnings.extend(linkcheck.check(site_dir))
            result.linkcheck_s = time.perf_counter() - started
        if pool is not None:
            progress("page rules", 0, None)
            started = time.perf_counter()
            rule_problems, result.rules_s = pending.result()
            result.rules_wait_s = time.perf_counter() - started
            result.warnings[:0] = rule_problems
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    result.total_s = time.perf_counter() - begun
    if strict and result.warnings:
        raise SiteCheckFailed(f"the site has {len(result.warnings)} problem(s) under --strict", result.warnings)
    return result


def clean(folder: Path) -> None:
    """Remove a generated folder (only if it carries ledger's marker)."""
    if (folder / MARKER).exists():
        shutil.rmtree(folder)


logging.getLogger(__name__).addHandler(logging.NullHandler())
