"""The command line's reference page, generated from the click commands themselves.

`ledger site reference` passes it to `ledger.site.reference.write_reference`: the site
never imports the CLI (the CLI sits above it).
"""

from __future__ import annotations

import click

from ..site.escape import md_fence
from ..site.reference import HEADER
from .main import cli


def cli_page() -> str:
    out = [
        HEADER + "# Command line",
        "",
        "Every command and option, as `ledger ... --help` prints them. Exit codes: 0 fine, 1 the check "
        "found violations (or `site build --strict` found problems), 2 bad input or usage.",
        "",
    ]

    def walk(cmd: click.Command, ctx: click.Context, path: str) -> None:
        out.extend([f"## {path}", "", str(md_fence(cmd.get_help(ctx))), ""])
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is None or getattr(sub, "hidden", False):
                    continue
                walk(
                    sub,
                    click.Context(sub, info_name=name, parent=ctx, terminal_width=100, max_content_width=100),
                    f"{path} {name}",
                )

    root = click.Context(cli, info_name="ledger", terminal_width=100, max_content_width=100)
    walk(cli, root, "ledger")
    return "\n".join(out).rstrip() + "\n"
