"""`ledger import FORMAT FILE...`."""

from __future__ import annotations

import click
from rich.table import Table
from rich.text import Text

from ..importers.base import ImportOptions, import_files
from .console import console
from .output import FORMAT_OPTION, print_json, print_warnings
from .writing import open_for_writing

_FORMATS = ["mlperf", "pytest-benchmark", "pyperf", "hyperfine", "asv", "junit", "ctest"]


def _foreign_lines(ledger, foreign: dict[str, list[str]]) -> list[str]:
    """What the user must know about commits that are not the ledger's own."""
    configured = ledger.config.sources
    lines = []
    for repo, shas in sorted(foreign.items()):
        n = len(shas)
        if repo in configured:
            lines.append(
                f"{n} commit(s) belong to {repo}; `ledger check` verifies them in {configured[repo]} (sources: in ledger.yaml)"
            )
        else:
            lines.append(
                f"{n} commit(s) are not in this ledger's source checkout; recorded as belonging to {repo} "
                f"(source.repo), which ledger.yaml does not declare: `ledger check` refuses them (sha-foreign, "
                f"an error unless its severity is lowered) until ledger.yaml declares a clone: `sources: {{{repo!r}: PATH}}`"
                + ("" if not repo.startswith("unknown:") else "; name the repository with --source-repo")
            )
    return lines


def _load(text: str | None) -> list[float]:
    if not text:
        return []
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter(
            f"{text!r} is not comma-separated numbers such as 0.52,0.61,0.70", param_hint="--load"
        ) from None
    if any(v < 0 for v in values):
        raise click.BadParameter("load averages are not negative", param_hint="--load")
    return values


@click.command("import")
@click.argument("import_format", metavar="FORMAT", type=click.Choice(_FORMATS))
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--contract", default=None, help="Id of the contract the results were measured under.")
@click.option(
    "--source-sha",
    default=None,
    help="Commit of the measured source, for files that do not record it (never overrides one they do).",
)
@click.option(
    "--source-repo",
    default=None,
    help="Repository the files' commits belong to (URL or name); `ledger check` verifies them against "
    "`sources:` in ledger.yaml.",
)
@click.option("--allocation", default=None, help="Allocation id (overrides the one derived from the file).")
@click.option("--topology", default=None, help="Topology such as '8x H100' (overrides the one derived from the file).")
@click.option("--tag", "tags", multiple=True, help="Tag every imported record (repeatable).")
@click.option(
    "--exit-code", type=int, default=None, help="junit/ctest: the test command's exit code (the files do not hold it)."
)
@click.option(
    "--load", "load", default=None, help="junit/ctest: load averages sampled while the tests ran, comma-separated."
)
@click.option("--command", "command_line", default=None, help="junit/ctest: the command that ran the tests.")
@click.option("--dry-run", is_flag=True, help="Parse and validate, write nothing.")
@FORMAT_OPTION
@click.pass_context
def command(
    ctx: click.Context,
    import_format: str,
    files: tuple[str, ...],
    contract,
    source_sha,
    source_repo,
    allocation,
    topology,
    tags,
    exit_code,
    load,
    command_line,
    dry_run: bool,
    fmt: str,
) -> int:
    """Import FILES written by another tool as ledger records.

    FORMAT is mlperf (result_N.txt logs, plus the system description .json), pytest-benchmark,
    pyperf, hyperfine, asv (results files, plus benchmarks.json for units), junit or ctest
    (gate records). Provenance comes from the files: a commit id they lack is recorded as a
    gap, never filled in with this checkout's commit. A file that is not FORMAT exits 2 with
    the line or key where it went wrong; nothing is written.
    """

    ledger = open_for_writing(ctx)
    options = ImportOptions(
        contract=contract,
        source_sha=source_sha,
        source_repo=source_repo,
        allocation=allocation,
        topology=topology,
        tags=list(tags),
        exit_code=exit_code,
        load_avg=_load(load),
        command=command_line,
    )
    result = import_files(ledger, import_format, list(files), options, dry_run=dry_run)
    rows = []
    for r in result.records:
        gaps = (getattr(r, "extra", None) or {}).get("provenance_gaps", [])
        rows.append(
            {
                "id": r.id,
                "kind": r.kind,
                "summary": r.summary(),
                "outcome": getattr(r, "outcome", None),
                "source": r.source.sha if r.source else None,
                "provenance_gaps": gaps,
                "path": None if dry_run else str(ledger.path_for(r.kind, r.id).relative_to(ledger.root)),
            }
        )
    foreign = _foreign_lines(ledger, result.foreign)
    print_warnings(ledger)
    if fmt == "json":
        print_json(
            {
                "format": import_format,
                "written": result.written,
                "records": rows,
                "notes": result.notes,
                "foreign_commits": result.foreign,
                "foreign": foreign,
            }
        )
        return 0

    table = Table(
        title=f"{'would import' if dry_run else 'imported'} {len(rows)} record(s) from {len(files)} {import_format} file(s)"
    )
    id_width = max((len(row["id"]) for row in rows), default=2)
    for col in ("id", "kind", "summary", "outcome", "source"):
        # An id is never folded (half an id cannot be copied into `ledger show`); text wraps.
        table.add_column(col, overflow="fold", no_wrap=col == "id", min_width=id_width if col == "id" else None)
    gap_count = 0
    for row in rows:
        gap_count += bool(row["provenance_gaps"])
        table.add_row(
            row["id"],
            row["kind"],
            Text(row["summary"]),
            row["outcome"] or "",
            Text(row["source"][:12] if row["source"] else "gap", style="" if row["source"] else "yellow"),
        )
    out = console()
    out.print(table)
    for note in result.notes:
        out.print(Text(f"note: {note}"))
    for line in foreign:
        out.print(Text(line, style="yellow"))
    if gap_count:
        out.print(
            Text(
                f"{gap_count} record(s) carry provenance gaps (extra.provenance_gaps); `ledger show ID` lists them.",
                style="yellow",
            )
        )
    return 0
