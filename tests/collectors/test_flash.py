"""flash-attn 4 and 2 in the collectors, on CPU, with a stand-in that has flash-attn 4's signatures.

The stand-in (tests/collectors/fa4_standin: `flash_attn.cute` with `flash_attn_func` and the
`interface._flash_attn_fwd/_flash_attn_bwd` functions flash-attn 4's autograd Function calls)
computes exact attention with explicit matmuls. The real flash-attn 4 ran through the same
code on an H200 (ledger/records: the issue #16 campaign and its FLOP audit).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from conftest import run_ledger  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from ledger.collectors.flops import FlopAuditError, audit_flops  # noqa: E402
from ledger.collectors.timer import VENDOR_H200_BF16  # noqa: E402

STANDIN = Path(__file__).parent / "fa4_standin"


@pytest.fixture
def fa4(monkeypatch):
    """flash-attn 4's stand-in on sys.path, imported fresh; its call log emptied."""
    for name in [m for m in sys.modules if m == "flash_attn" or m.startswith("flash_attn.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(STANDIN))
    import flash_attn.cute.interface as interface

    interface.CALLS.clear()
    yield interface
    for name in [m for m in sys.modules if m == "flash_attn" or m.startswith("flash_attn.")]:
        sys.modules.pop(name, None)


def _qkv(b=2, sq=19, sk=11, h=3, d=8, dtype=torch.float64):
    gen = torch.Generator().manual_seed(7)
    return [torch.randn(b, s, h, d, dtype=dtype, generator=gen, requires_grad=True) for s in (sq, sk, sk)]


def _sdpa(q, k, v, causal=False):
    return F.scaled_dot_product_attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=causal
    ).transpose(1, 2)


@pytest.mark.slow
@pytest.mark.parametrize("causal", [False, True])
def test_counted_fa4_computes_attention_and_its_gradients(fa4, causal):
    from ledger.collectors.flash import flash_attn_func

    q, k, v = _qkv(sk=19 if causal else 11)
    out = flash_attn_func(q, k, v, causal=causal)
    ref = _sdpa(q, k, v, causal)
    grad = torch.randn_like(out)
    got = torch.autograd.grad(out, (q, k, v), grad)
    want = torch.autograd.grad(ref, (q, k, v), grad)
    assert torch.allclose(out, ref, atol=1e-5)  # the stand-in computes in fp32
    for g, w in zip(got, want, strict=True):
        assert torch.allclose(g, w, atol=1e-5)
    # The stand-in's kernels ran: the call went to flash-attn 4's functions, once each way.
    assert [c[0] for c in fa4.CALLS] == ["fwd", "bwd"]


@pytest.mark.slow  # several seconds: out of the quick subset
def test_flop_counter_mode_counts_fa4_with_the_sdpa_convention(fa4):
    from ledger.collectors.flash import flash_attn_func

    b, sq, sk, h, d = 2, 19, 11, 3, 8
    q, k, v = _qkv(b, sq, sk, h, d)
    with FlopCounterMode(display=False) as counter:  # a plain FlopCounterMode: no custom mapping
        out = flash_attn_func(q, k, v)
        out.backward(torch.randn_like(out))
    counts = {str(op): n for op, n in counter.get_flop_counts()["Global"].items()}
    fwd = 4 * b * h * sq * sk * d
    assert counts == {"ledger.fa4_fwd": fwd, "ledger.fa4_bwd": fwd * 5 // 2}


def test_flash_attn_4_called_directly_counts_zero_so_the_audit_refuses_it(fa4):
    """Why the custom op exists: flash-attn 4's own function is invisible to FlopCounterMode."""
    from flash_attn.cute import flash_attn_func as raw

    q, k, v = _qkv()

    def step():
        out, _lse = raw(q, k, v)
        out.sum().backward()

    with pytest.raises(FlopAuditError) as err:
        audit_flops(step, analytic=4 * 2 * 3 * 19 * 11 * 8 * 7 // 2, peak=VENDOR_H200_BF16)
    assert "FlopCounterMode 0 FLOP/sample" in str(err.value)


class FA4Block(nn.Module):
    """A transformer block whose attention is flash-attn 4 through ledger's counted call."""

    def __init__(self, d=32, heads=4) -> None:
        super().__init__()
        self.heads = heads
        self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)

    def forward(self, x):
        from ledger.collectors.flash import flash_attn_func

        b, s, d = x.shape
        q, k, v = (t.reshape(b, s, self.heads, d // self.heads) for t in self.qkv(x).chunk(3, -1))
        return x + self.o(flash_attn_func(q, k, v).reshape(b, s, d))


def test_a_model_on_fa4_audits_to_the_flop(fa4):
    b, s, d, h = 2, 24, 32, 4
    model = FA4Block(d, h)
    x = torch.randn(b, s, d)

    def step():
        model(x).square().mean().backward()

    attn_fwd = 4 * h * s * s * (d // h)
    analytic = {
        "qkv": 2 * s * d * 3 * d * 2,  # forward + weight grad (x needs no grad)
        "o": 2 * s * d * d * 3,
        "attention fwd + bwd": attn_fwd * 7 // 2,
    }
    result = audit_flops(step, analytic=analytic, samples_per_step=b, peak=VENDOR_H200_BF16)
    assert result.exact
    assert result.counted_by_op["ledger.fa4_fwd"] == b * attn_fwd
    assert result.counted_by_op["ledger.fa4_bwd"] == b * attn_fwd * 5 // 2
    assert not result.uncounted_ops


@pytest.mark.slow
def test_fa4_compiles_as_one_opaque_op(fa4):
    from ledger.collectors.flash import flash_attn_func

    q, k, v = _qkv(dtype=torch.float32)
    compiled = torch.compile(lambda q, k, v: flash_attn_func(q, k, v), backend="aot_eager", fullgraph=True)
    out = compiled(q, k, v)
    assert torch.allclose(out, _sdpa(q, k, v), atol=1e-5)


def test_attention_benchmark_tries_fa4_fa2_and_every_sdpa_backend(fa4):
    from ledger.collectors.attention import benchmark_attention

    records = benchmark_attention(
        batch=1, seq_q=16, seq_k=8, heads=2, head_dim=8, dtype=torch.float32, device="cpu", repeats=2, warmup=1
    )
    by_impl = {}
    for r in records:
        by_impl.setdefault(r["extra"]["implementation"], []).append(r)
    assert list(by_impl) == [
        "flash-attn-4 0.0.0+standin",
        "flash-attn",
        "torch-sdpa-flash",
        "torch-sdpa-cudnn",
        "torch-sdpa-efficient",
        "torch-sdpa-math",
    ]
    fa4_recs = by_impl["flash-attn-4 0.0.0+standin"]
    assert [r["metric"] for r in fa4_recs] == ["attention_fwd_tflops", "attention_bwd_tflops"]
    assert all(r["extra"]["version"] == "0.0.0+standin" and len(r["samples"]) == 2 for r in fa4_recs)
    # flash-attn 2 is not installed beside flash-attn 4's namespace package: a failed outcome, with why.
    fa2 = by_impl["flash-attn"]
    assert {r["outcome"] for r in fa2} == {"failed"}
    assert "flash-attn 2 is not importable here" in fa2[0]["notes"]
    assert by_impl["torch-sdpa-math"][0]["extra"]["version"] == f"torch {torch.__version__}"
    # CUDA-only SDPA backends on a CPU are recorded as not run, not dropped.
    assert {r["outcome"] for r in by_impl["torch-sdpa-cudnn"]} == {"failed"}


def _pythonpath(*extra: Path) -> str:
    parts = [str(p) for p in extra] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return os.pathsep.join(parts)


@pytest.mark.slow
def test_collect_attention_cli_names_fa4_and_records_it_failed_when_absent(repo, tmp_path):
    out = tmp_path / "att.json"
    args = [
        "collect",
        "attention",
        "--batch",
        "1",
        "--seq",
        "16",
        "--seq-k",
        "8",
        "--heads",
        "2",
        "--head-dim",
        "8",
        "--dtype",
        "fp32",
        "--device",
        "cpu",
        "--repeats",
        "2",
        "--backend",
        "flash-attn-4",
        "--out",
        str(out),
    ]
    with_fa4 = run_ledger(repo, *args, env={"PYTHONPATH": _pythonpath(STANDIN)})
    assert with_fa4.returncode == 0, with_fa4.stderr
    bodies = json.loads(out.read_text())
    assert {b["extra"]["implementation"] for b in bodies} == {"flash-attn-4 0.0.0+standin"}
    assert all(b.get("outcome", "ok") == "ok" and b["samples"] for b in bodies)
    added = run_ledger(repo, "add", "measurement", str(out))
    assert added.returncode == 0, added.stderr

    without = run_ledger(repo, *args)
    assert without.returncode == 0, without.stderr
    bodies = json.loads(out.read_text())
    assert [b["outcome"] for b in bodies] == ["failed", "failed"]
    assert "flash-attn 4 is not importable here" in bodies[0]["notes"]


def test_collect_attention_refuses_an_unknown_backend(repo):
    bad = run_ledger(
        repo,
        "collect",
        "attention",
        "--seq",
        "8",
        "--heads",
        "1",
        "--head-dim",
        "8",
        "--backend",
        "flash-attn-5",
        "--device",
        "cpu",
    )
    assert bad.returncode == 2
    assert "flash-attn-4" in bad.stderr and "flash-attn-5" in bad.stderr


def test_environment_names_flash_attn_4(fa4):
    from ledger.collectors.environment import collect_environment

    assert collect_environment(import_torch=False)["flash_attn"] == "flash-attn-4 0.0.0+standin"


FA2_STANDIN = Path(__file__).parent / "fa2_standin"


@pytest.fixture
def fa2(monkeypatch):
    """flash-attn 2's stand-in (its custom ops and signatures) on sys.path, imported fresh."""
    for name in [m for m in sys.modules if m == "flash_attn" or m.startswith("flash_attn.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(FA2_STANDIN))
    import flash_attn

    yield flash_attn
    for name in [m for m in sys.modules if m == "flash_attn" or m.startswith("flash_attn.")]:
        sys.modules.pop(name, None)


def test_a_model_on_fa2_audits_to_the_flop_through_its_custom_ops(fa2):
    b, s, d, h = 2, 24, 32, 4
    qkv, o = nn.Linear(d, 3 * d), nn.Linear(d, d)
    x = torch.randn(b, s, d)

    def step():
        q, k, v = (t.reshape(b, s, h, d // h) for t in qkv(x).chunk(3, -1))
        (x + o(fa2.flash_attn_func(q, k, v).reshape(b, s, d))).square().mean().backward()

    attn_fwd = 4 * h * s * s * (d // h)
    analytic = {"qkv": 2 * s * d * 3 * d * 2, "o": 2 * s * d * d * 3, "attention": attn_fwd * 7 // 2}
    # A plain FlopCounterMode counts flash-attn 2's ops as zero ...
    with FlopCounterMode(display=False) as counter:
        step()
    assert counter.get_total_flops() == b * (analytic["qkv"] + analytic["o"])
    # ... the audit maps them with the same convention as flash-attn 4 and SDPA.
    result = audit_flops(step, analytic=analytic, samples_per_step=b, peak=VENDOR_H200_BF16)
    assert result.exact
    assert result.counted_by_op["flash_attn._flash_attn_forward"] == b * attn_fwd
    assert result.counted_by_op["flash_attn._flash_attn_backward"] == b * attn_fwd * 5 // 2


def test_attention_benchmark_names_flash_attn_2_with_its_version(fa2):
    from ledger.collectors.attention import benchmark_attention

    records = benchmark_attention(
        batch=1,
        seq_q=16,
        seq_k=8,
        heads=2,
        head_dim=8,
        dtype=torch.float32,
        device="cpu",
        backends=["flash-attn-4", "flash-attn"],
        repeats=2,
        warmup=1,
    )
    by_impl = {r["extra"]["implementation"]: r for r in records}
    assert set(by_impl) == {"flash-attn-4", "flash-attn 2.8.3+standin"}
    assert by_impl["flash-attn 2.8.3+standin"]["extra"]["version"] == "2.8.3+standin"
    assert by_impl["flash-attn 2.8.3+standin"]["samples"]
    # flash-attn 2 alone does not hold flash-attn 4: recorded as failed, with the reason.
    assert by_impl["flash-attn-4"]["outcome"] == "failed"
    assert "flash-attn 4 is not importable here" in by_impl["flash-attn-4"]["notes"]
