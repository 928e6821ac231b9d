"""`ledger collect env|ceiling|attention`: measure this machine and write the records.

Each subcommand adds its records to the ledger (stamped like `ledger add`), or with
`--out FILE` writes the record bodies as JSON for a later `ledger add KIND FILE`
(on a GPU machine where the ledger is not checked out, say). torch is imported only
here, never by `ledger add`, `check`, `show` or `site`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ..collectors.environment import collect_environment, sample_under_load
from ..store import Item, add
from .add import build_stamping, stamping_options
from .output import FORMAT_OPTION, print_json
from .writing import open_for_writing


def _emit(
    ctx: click.Context, kind: str, bodies: list[dict[str, Any]], out: str | None, fmt: str, stamping_args: tuple
) -> None:
    if out:
        path = Path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            json.dumps(bodies[0] if len(bodies) == 1 else bodies, indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
        if fmt == "json":
            print_json({"kind": kind, "file": str(path), "records": len(bodies)})
        else:
            click.echo(f"wrote {len(bodies)} {kind} record(s) to {path}; add them with `ledger add {kind} {path}`")
        return

    ledger = open_for_writing(ctx)
    records = add(
        ledger,
        kind,
        [
            Item(b, "<collect>", None, place=f"record {i + 1}" if len(bodies) > 1 else None)
            for i, b in enumerate(bodies)
        ],
        build_stamping(*stamping_args),
    )
    if fmt == "json":
        print_json(
            [
                {
                    "id": r.id,
                    "kind": r.kind,
                    "title": r.summary(),
                    "path": str(ledger.path_for(r.kind, r.id).relative_to(ledger.root)),
                }
                for r in records
            ]
        )
    else:
        for r in records:
            click.echo(f"{r.id}  {r.summary()}")


def _out_option(func):
    return click.option(
        "--out",
        default=None,
        type=click.Path(dir_okay=False),
        help="Write the record body as JSON to this file instead of adding it to the ledger.",
    )(func)


@click.group("collect")
def group() -> None:
    """Measure this machine: environment and health, ceilings, attention kernels."""


@group.command("env")
@click.option(
    "--load/--idle",
    default=False,
    show_default=True,
    help="Sample NVML while ~3 s of bf16 matrix products run, so clocks are judged under load.",
)
@_out_option
@stamping_options
@FORMAT_OPTION
@click.pass_context
def env(ctx: click.Context, load: bool, out, source_path, source_sha, allocation, topology, fmt: str) -> None:
    """GPUs (clocks, power, clock-event reasons, ECC, UUIDs), versions, allowlisted flags, load, health."""
    if load:
        body = sample_under_load()
    else:
        body = collect_environment(under_load=False)
    _emit(ctx, "environment", [body], out, fmt, (source_path, source_sha, allocation, topology))


_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


@group.command("ceiling")
@click.option("--device", default=None, help="torch device (default: cuda if available, else cpu).")
@click.option(
    "--matmul-size", default=8192, show_default=True, type=click.IntRange(16), help="N of the N x N x N product."
)
@click.option(
    "--copy-mib", default=2048, show_default=True, type=click.IntRange(1), help="Size of the copied buffer, MiB."
)
@click.option("--dtype", type=click.Choice(sorted(_DTYPES)), default="bf16", show_default=True)
@click.option("--repeats", default=20, show_default=True, type=click.IntRange(1))
@_out_option
@stamping_options
@FORMAT_OPTION
@click.pass_context
def ceiling(
    ctx: click.Context,
    device,
    matmul_size,
    copy_mib,
    dtype,
    repeats,
    out,
    source_path,
    source_sha,
    allocation,
    topology,
    fmt,
) -> None:
    """Measured matmul TFLOP/s and device-to-device copy TB/s: the positive controls."""
    import torch

    # torch-backed: imported here so `ledger collect env` runs where torch is not installed.
    from ..collectors.ceiling import measure_ceiling

    body = measure_ceiling(
        device,
        matmul_size=matmul_size,
        copy_bytes=copy_mib << 20,
        dtype=getattr(torch, _DTYPES[dtype]),
        repeats=repeats,
    )
    _emit(ctx, "ceiling", [body], out, fmt, (source_path, source_sha, allocation, topology))


@group.command("attention")
@click.option("--batch", default=1, show_default=True, type=click.IntRange(1))
@click.option("--seq", "seq_q", required=True, type=click.IntRange(1), help="Query sequence length.")
@click.option("--seq-k", default=None, type=click.IntRange(1), help="Key/value length (default: --seq).")
@click.option("--heads", required=True, type=click.IntRange(1))
@click.option("--head-dim", required=True, type=click.IntRange(1))
@click.option("--causal", is_flag=True, help="Causal mask (halves the FLOP count under flash-attn's convention).")
@click.option("--dtype", type=click.Choice(sorted(_DTYPES)), default="bf16", show_default=True)
@click.option(
    "--backend",
    "backends",
    multiple=True,
    type=click.Choice(["flash-attn-4", "flash-attn", "flash", "cudnn", "efficient", "math"]),
    help="Only these (repeatable): flash-attn-4, flash-attn (2), or an SDPA backend. Default: all of them; "
    "one that cannot run here is recorded as failed.",
)
@click.option("--device", default=None)
@click.option("--repeats", default=20, show_default=True, type=click.IntRange(1))
@_out_option
@stamping_options
@FORMAT_OPTION
@click.pass_context
def attention(
    ctx,
    batch,
    seq_q,
    seq_k,
    heads,
    head_dim,
    causal,
    dtype,
    backends,
    device,
    repeats,
    out,
    source_path,
    source_sha,
    allocation,
    topology,
    fmt,
) -> None:
    """Forward and backward TFLOP/s per implementation, flash-attn's FLOP convention."""
    import torch

    # torch-backed: imported here so `ledger collect env` runs where torch is not installed.
    from ..collectors.attention import benchmark_attention

    bodies = benchmark_attention(
        batch=batch,
        seq_q=seq_q,
        seq_k=seq_k,
        heads=heads,
        head_dim=head_dim,
        causal=causal,
        dtype=getattr(torch, _DTYPES[dtype]),
        device=device,
        backends=list(backends) or None,
        repeats=repeats,
    )
    _emit(ctx, "measurement", bodies, out, fmt, (source_path, source_sha, allocation, topology))
