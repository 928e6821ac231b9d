"""`ledger site build [--out DIR] [--strict]`, `ledger site serve`, `ledger site reference`."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

import click
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from ..config import inside
from ..site import build_site
from ..site.builder import SiteCheckFailed
from ..site.mkdocs_run import site_dir as mkdocs_site_dir
from ..site.reference import write_reference
from ..site.serve import server
from .console import console
from .output import FORMAT_OPTION, open_ledger, print_json
from .reference import cli_page


@click.group("site")
def command() -> None:
    """Build and serve the ledger's MkDocs-Material site."""


@contextmanager
def _progress(enabled: bool):
    """A rich progress bar on stderr, shown only to a terminal (CI logs stay clean)."""
    if not enabled:
        yield None
        return

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console(stderr=True),
        transient=True,
    ) as bar:
        tasks: dict[str, TaskID] = {}

        def update(stage: str, done: int, total: int | None) -> None:
            if stage not in tasks:
                for other in tasks.values():
                    bar.update(other, visible=False)
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update


def _build(ctx: click.Context, out: str | None, strict: bool, fmt: str, repository_code: bool = False):

    ledger = open_ledger(ctx)
    with _progress(fmt == "text" and sys.stderr.isatty()) as progress:
        return ledger, build_site(
            ledger,
            out=Path(out) if out else None,
            strict=strict,
            progress=progress,
            repository_code=repository_code,
        )


@command.command("build")
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default=None,
    help="Folder for the HTML (default: site_dir of mkdocs.yml).",
)
@click.option(
    "--strict/--no-strict",
    default=False,
    show_default=True,
    help="Fail (exit 1) on any MkDocs warning, page-rule violation or broken link.",
)
@click.option(
    "--repository-code",
    is_flag=True,
    help="Use the code this repository brings: site.templates, asset overrides, and mkdocs.yml's hooks, "
    "theme.custom_dir, extra scripts and styles, !ENV and !!python tags, Markdown extensions and plugins "
    "beyond the inert ones, markup in the theme's text settings, script URLs. Refused without it.",
)
@FORMAT_OPTION
@click.pass_context
def build(ctx: click.Context, out: str | None, strict: bool, repository_code: bool, fmt: str) -> int:
    """Render the ledger into Markdown, then build the site with MkDocs.

    Templates come from ledger's package, overridden file by file by the folder named in
    `site.templates` of ledger.yaml, only with --repository-code (they render sandboxed). Exit codes: 0 built, 1 problems under --strict,
    2 bad input.
    """

    try:
        ledger, result = _build(ctx, out, strict, fmt, repository_code)
    except SiteCheckFailed as exc:
        if fmt == "json":
            print_json({"ok": False, "problems": [p.as_dict() for p in exc.problems]})
            ctx.exit(exc.exit_code)
        raise
    if fmt == "json":
        print_json({"ok": True, **result.as_dict()})
        return 0

    out_console = console()
    for problem in result.warnings:
        click.echo(f"warning: {problem}", err=True)
    out_console.print(
        Text(
            f"built {result.pages} pages from {result.records} records in {result.total_s:.1f} s "
            f"(ledger {result.generation_s:.1f} s, MkDocs {result.mkdocs_s:.1f} s, page rules {result.rules_s:.1f} s, "
            f"links {result.linkcheck_s:.1f} s)"
        )
    )
    out_console.print(Text(f"open {result.index}"))
    return 0


@command.command("serve")
@click.option("--port", type=int, default=8000, show_default=True)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (local only by default).")
@click.option("--no-build", is_flag=True, help="Serve the last build without rebuilding.")
@click.pass_context
def serve(ctx: click.Context, port: int, host: str, no_build: bool) -> int:
    """Build the site, then serve it over HTTP until Ctrl-C."""

    if no_build:
        ledger = open_ledger(ctx)
        site_dir = mkdocs_site_dir(inside(ledger.root, ledger.config.site.mkdocs_yml, "site.mkdocs_yml"), ledger.root)
    else:
        _, result = _build(ctx, None, False, "text")
        for problem in result.warnings:
            click.echo(f"warning: {problem}", err=True)
        site_dir = result.site_dir
    httpd = server(site_dir, host, port)
    click.echo(f"serving {site_dir} at http://{host}:{httpd.server_address[1]}/ (Ctrl-C stops)")
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()
    return 0


@command.command("reference")
@click.option("--out", type=click.Path(file_okay=False), default="docs/reference", show_default=True)
def reference(out: str) -> int:
    """Write the reference pages: record kinds (from the schema), rules, and the CLI."""

    for path in write_reference(Path(out), cli_page()):
        click.echo(str(path))
    return 0
