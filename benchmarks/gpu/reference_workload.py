"""The reference workload: a stack of DiT-style transformer blocks at LTX-2-like shapes.

Per block (LTX-2's video stream: d_model 4,096, 32 heads of 128, FFN 4x with GELU):
adaLN-single modulation from a shared timestep embedding, self-attention with q/k
RMSNorm, cross-attention from video tokens to text tokens, and the gated FFN. Around
the stack: a patch embedding (latent channels -> d), a caption projection (text
encoder width -> d), the timestep MLP, and the output projection. Parameters and
AdamW state are fp32 (master weights); compute runs under bf16 autocast.

`analytic_flops` is the exact model-FLOP count per sample under FlopCounterMode's
conventions: a linear is 2·tokens·in·out forward, and in backward 2·tokens·in·out for
the weight gradient plus the same again for the input gradient when the input needs
one (the embeddings' inputs do not); SDPA is 4·H·Sq·Sk·Dh forward and 2.5x that
backward (five matmuls, the score recompute included). Elementwise work (norms,
GELU, modulation, the optimizer) is not model FLOP and is not counted.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass(frozen=True)
class Shape:
    blocks: int = 8
    dim: int = 4096
    heads: int = 32
    ffn_mult: int = 4
    video_tokens: int = 4290
    text_tokens: int = 1024
    latent_channels: int = 128
    text_dim: int = 3840
    timestep_freq: int = 256
    batch: int = 2

    @property
    def head_dim(self) -> int:
        return self.dim // self.heads

    def as_dict(self) -> dict:
        return {**asdict(self), "head_dim": self.head_dim}


#: LTX-2-like: 4,290 video tokens (81x480x832 latents), 1,024 text tokens, heads of 128.
LTX2_LIKE = Shape()
#: The same structure small enough for a CPU test.
SMALL = Shape(
    blocks=2,
    dim=256,
    heads=2,
    video_tokens=96,
    text_tokens=32,
    latent_channels=16,
    text_dim=64,
    timestep_freq=32,
    batch=2,
)


def _attention(q, k, v, heads):
    b, sq, d = q.shape
    sk = k.shape[1]
    q = q.view(b, sq, heads, d // heads).transpose(1, 2)
    k = k.view(b, sk, heads, d // heads).transpose(1, 2)
    v = v.view(b, sk, heads, d // heads).transpose(1, 2)
    out = F.scaled_dot_product_attention(q, k, v)
    return out.transpose(1, 2).reshape(b, sq, d)


def _rms(x, norm: nn.RMSNorm):
    # The fp32 master weight is cast to the bf16 activations so the fused kernel runs.
    return F.rms_norm(x, (x.shape[-1],), norm.weight.to(x.dtype), norm.eps)


class Block(nn.Module):
    def __init__(self, s: Shape) -> None:
        super().__init__()
        d, self.heads = s.dim, s.heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.q_norm, self.k_norm = nn.RMSNorm(d), nn.RMSNorm(d)
        self.xq, self.xk, self.xv, self.xo = (nn.Linear(d, d) for _ in range(4))
        self.xq_norm, self.xk_norm = nn.RMSNorm(d), nn.RMSNorm(d)
        self.ff1, self.ff2 = nn.Linear(d, s.ffn_mult * d), nn.Linear(s.ffn_mult * d, d)
        self.scale_shift = nn.Parameter(torch.randn(6, d) / d**0.5)

    def forward(self, x, c, t6):
        shift_a, scale_a, gate_a, shift_f, scale_f, gate_f = (self.scale_shift[None] + t6).unbind(1)
        h = F.rms_norm(x, (x.shape[-1],)) * (1 + scale_a[:, None]) + shift_a[:, None]
        a = _attention(_rms(self.q(h), self.q_norm), _rms(self.k(h), self.k_norm), self.v(h), self.heads)
        x = x + gate_a[:, None] * self.o(a)
        h = F.rms_norm(x, (x.shape[-1],))
        a = _attention(_rms(self.xq(h), self.xq_norm), _rms(self.xk(c), self.xk_norm), self.xv(c), self.heads)
        x = x + self.xo(a)
        h = F.rms_norm(x, (x.shape[-1],)) * (1 + scale_f[:, None]) + shift_f[:, None]
        return x + gate_f[:, None] * self.ff2(F.gelu(self.ff1(h), approximate="tanh"))


class DiT(nn.Module):
    def __init__(self, s: Shape) -> None:
        super().__init__()
        self.shape = s
        self.patch = nn.Linear(s.latent_channels, s.dim)
        self.caption = nn.Linear(s.text_dim, s.dim)
        self.t1, self.t2 = nn.Linear(s.timestep_freq, s.dim), nn.Linear(s.dim, 6 * s.dim)
        self.blocks = nn.ModuleList(Block(s) for _ in range(s.blocks))
        self.out = nn.Linear(s.dim, s.latent_channels)

    def timestep(self, t):
        half = self.shape.timestep_freq // 2
        freqs = torch.exp(-math.log(10000) * torch.arange(half, device=t.device, dtype=torch.float32) / half)
        return torch.cat([torch.cos(t[:, None] * freqs), torch.sin(t[:, None] * freqs)], dim=-1)

    def forward(self, latents, text, t):
        x, c = self.patch(latents), self.caption(text)
        t6 = self.t2(F.silu(self.t1(self.timestep(t)))).view(-1, 6, self.shape.dim)
        for block in self.blocks:
            x = block(x, c, t6)
        return self.out(F.rms_norm(x, (x.shape[-1],)))


def analytic_flops(s: Shape) -> dict[str, int]:
    """Model FLOP per sample, by term (see the module docstring for the conventions)."""
    sv, st, d, f, L = s.video_tokens, s.text_tokens, s.dim, s.ffn_mult * s.dim, s.blocks

    def linear(tokens, fan_in, fan_out, input_grad=True):
        fwd = 2 * tokens * fan_in * fan_out
        return fwd * (3 if input_grad else 2)

    def attn(sq, sk):
        return 4 * s.heads * sq * sk * s.head_dim * 7 // 2  # forward + 2.5x forward backward

    return {
        "blocks: self-attention q/k/v/o projections": L * 4 * linear(sv, d, d),
        "blocks: cross-attention q/o projections (video)": L * 2 * linear(sv, d, d),
        "blocks: cross-attention k/v projections (text)": L * 2 * linear(st, d, d),
        "blocks: FFN": L * (linear(sv, d, f) + linear(sv, f, d)),
        "blocks: self-attention SDPA": L * attn(sv, sv),
        "blocks: cross-attention SDPA": L * attn(sv, st),
        "patch embedding (no input grad)": linear(sv, s.latent_channels, d, input_grad=False),
        "caption projection (no input grad)": linear(st, s.text_dim, d, input_grad=False),
        "timestep MLP": linear(1, s.timestep_freq, d, input_grad=False) + linear(1, d, 6 * d),
        "output projection": linear(sv, d, s.latent_channels),
    }


def build(s: Shape, device: torch.device):
    """Model (fp32 master weights), fused AdamW where available, inputs and one training step."""
    torch.manual_seed(0)
    model = DiT(s).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=device.type == "cuda")
    gen = torch.Generator(device=device).manual_seed(1)
    latents = torch.randn(s.batch, s.video_tokens, s.latent_channels, device=device, generator=gen)
    text = torch.randn(s.batch, s.text_tokens, s.text_dim, device=device, generator=gen)
    target = torch.randn(s.batch, s.video_tokens, s.latent_channels, device=device, generator=gen)
    t = torch.rand(s.batch, device=device, generator=gen) * 1000
    autocast = torch.autocast(device.type, dtype=torch.bfloat16)

    def step():
        with autocast:
            pred = model(latents, text, t)
        loss = F.mse_loss(pred.float(), target)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    return model, opt, step
