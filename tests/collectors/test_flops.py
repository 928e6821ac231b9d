"""FLOP audit of a small transformer block on CPU: exact, loud when not, custom ops mapped."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from ledger.collectors.flops import FlopAuditError, audit_flops  # noqa: E402
from ledger.collectors.timer import VENDOR_H200_BF16  # noqa: E402
from ledger.schema.kinds import FlopAudit  # noqa: E402

B, S, D, H, FF = 2, 24, 64, 4, 256


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv, self.o = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.ff1, self.ff2 = nn.Linear(D, FF), nn.Linear(FF, D)

    def forward(self, x):
        q, k, v = (t.view(B, S, H, D // H).transpose(1, 2) for t in self.qkv(F.layer_norm(x, (D,))).chunk(3, -1))
        x = x + self.o(F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(B, S, D))
        return x + self.ff2(F.gelu(self.ff1(F.layer_norm(x, (D,)))))


def analytic_per_sample() -> dict[str, int]:
    lin = lambda i, o: 3 * 2 * S * i * o  # noqa: E731  fwd + weight grad + input grad
    attn_fwd = 4 * H * S * S * (D // H)
    return {
        "qkv": lin(D, 3 * D),
        "o": lin(D, D),
        "ffn": lin(D, FF) + lin(FF, D),
        "attention": attn_fwd + attn_fwd * 5 // 2,
    }


def make_step():
    torch.manual_seed(0)
    block = Block()
    x = torch.randn(B, S, D, requires_grad=True)
    return lambda: block(x).square().mean().backward()


def test_small_block_audits_exactly_and_records():
    result = audit_flops(make_step(), analytic=analytic_per_sample(), samples_per_step=B, peak=VENDOR_H200_BF16)
    assert result.exact and result.difference == 0
    assert result.counted_flop_per_sample == sum(analytic_per_sample().values())
    body = result.record(title="small block")
    audit = FlopAudit.model_validate(
        {
            **body,
            "id": "01M8MMZGG183HMXFSPKCH0XKD6",
            "created_at": "2026-01-01T00:00:00Z",
            "tool": {"version": "0"},
            "sha256": "0" * 64,
        }
    )
    assert audit.exact and audit.peak.tflops_per_gpu == 989.0


def test_an_op_flopcountermode_cannot_see_fails_loudly_and_is_named():
    # Without ledger's mapping, PyTorch's CPU flash attention counts zero: the audit must say so.
    with pytest.raises(FlopAuditError) as err:
        audit_flops(make_step(), analytic=analytic_per_sample(), samples_per_step=B, default_mapping=False)
    message = str(err.value)
    assert "does not reconcile" in message and "_scaled_dot_product_flash_attention_for_cpu" in message
    attn = analytic_per_sample()["attention"]
    assert f"unexplained difference +{attn:,}" in message


def test_itemised_terms_reconcile_but_the_audit_is_no_longer_exact():
    attn = analytic_per_sample()["attention"]
    result = audit_flops(
        make_step(),
        analytic=analytic_per_sample(),
        samples_per_step=B,
        default_mapping=False,
        itemised={"CPU flash attention, counted zero by FlopCounterMode": attn},
    )
    assert result.difference == 0 and not result.exact


def test_a_wrong_analytic_count_fails():
    wrong = {**analytic_per_sample(), "qkv": analytic_per_sample()["qkv"] // 3 * 2}  # forgot the input gradient
    with pytest.raises(FlopAuditError, match="unexplained difference -"):
        audit_flops(make_step(), analytic=wrong, samples_per_step=B)


@pytest.mark.slow  # several seconds: out of the quick subset
def test_a_custom_attention_op_is_counted_through_a_mapping():
    # Stands in for flash-attn's custom ops: an op outside FlopCounterMode's registry.
    lib = torch.library.Library("ledgertest", "FRAGMENT")
    lib.define("attn(Tensor q, Tensor k, Tensor v) -> Tensor")
    lib.impl(
        "attn",
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=False).detach() * 1,
        "CompositeExplicitAutograd",
    )
    q = torch.randn(1, 2, 16, 8)
    step = lambda: torch.ops.ledgertest.attn(q, q, q)  # noqa: E731
    fwd = 4 * 2 * 16 * 16 * 8
    with pytest.raises(FlopAuditError, match="ledgertest.attn x1"):
        audit_flops(step, analytic=fwd)

    def formula(q_shape, k_shape, v_shape, *args, out_shape=None, **kwargs):
        b, h, s, d = q_shape
        return 4 * b * h * s * k_shape[2] * d

    result = audit_flops(step, analytic=fwd, custom_mapping={torch.ops.ledgertest.attn: formula})
    assert result.exact and "ledgertest.attn" in result.counted_by_op
