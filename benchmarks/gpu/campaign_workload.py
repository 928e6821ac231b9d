"""The reference DiT workload with the campaign's knobs (issue #16).

The model, its parameters and its FLOP are those of `reference_workload.py` (fp32 master
parameters and AdamW state, bf16 autocast compute); what a configuration changes is how
a step runs:

- `attn`:     "sdpa" (PyTorch SDPA, cuDNN attention forced) or "fa4" (flash-attn 4 through
              ledger's counted custom op, `ledger.collectors.flash.flash_attn_func`);
- `compile`:  "none" or "blocks" (torch.compile of each transformer block: regional);
- `optim`:    "fused" (AdamW fused=True) or "foreach" (AdamW foreach, capturable);
- `graphs`:   False or True (the whole step, optimizer included, captured as one CUDA graph);
- `batch`:    samples per step.

One model and one optimizer serve every configuration, so the arms of a sandwich differ
only by the knob under test.
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass, replace

import torch
import torch.nn as nn
import torch.nn.functional as F
from reference_workload import DiT, Shape, _rms

from ledger.collectors.flash import flash_attn_func


@dataclass(frozen=True)
class Config:
    attn: str = "sdpa"
    compile: str = "none"
    optim: str = "fused"
    graphs: bool = False
    batch: int = 2

    def key(self) -> str:
        return f"{self.attn}/{self.compile}/{self.optim}/{'graphs' if self.graphs else 'eager-launch'}/b{self.batch}"

    def label(self) -> str:
        parts = [
            "flash-attn 4" if self.attn == "fa4" else "SDPA cuDNN",
            "compiled blocks" if self.compile == "blocks" else "eager",
            f"{self.optim} AdamW",
            "CUDA graph" if self.graphs else None,
            f"batch {self.batch}",
        ]
        return ", ".join(p for p in parts if p)

    def with_(self, **kw) -> Config:
        return replace(self, **kw)

    def as_dict(self) -> dict:
        return asdict(self)


BASELINE = Config()


def sdpa_context(device: torch.device):
    if device.type != "cuda":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.CUDNN_ATTENTION])


def attention(q, k, v, heads: int, impl: str):
    b, sq, d = q.shape
    sk = k.shape[1]
    q, k, v = q.view(b, sq, heads, d // heads), k.view(b, sk, heads, d // heads), v.view(b, sk, heads, d // heads)
    if impl == "fa4":
        return flash_attn_func(q, k, v).reshape(b, sq, d)
    out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
    return out.transpose(1, 2).reshape(b, sq, d)


def block_forward(block: nn.Module, x, c, t6, impl: str):
    """reference_workload.Block.forward with the attention implementation as an argument."""
    shift_a, scale_a, gate_a, shift_f, scale_f, gate_f = (block.scale_shift[None] + t6).unbind(1)
    h = F.rms_norm(x, (x.shape[-1],)) * (1 + scale_a[:, None]) + shift_a[:, None]
    a = attention(_rms(block.q(h), block.q_norm), _rms(block.k(h), block.k_norm), block.v(h), block.heads, impl)
    x = x + gate_a[:, None] * block.o(a)
    h = F.rms_norm(x, (x.shape[-1],))
    a = attention(_rms(block.xq(h), block.xq_norm), _rms(block.xk(c), block.xk_norm), block.xv(c), block.heads, impl)
    x = x + block.xo(a)
    h = F.rms_norm(x, (x.shape[-1],)) * (1 + scale_f[:, None]) + shift_f[:, None]
    return x + gate_f[:, None] * block.ff2(F.gelu(block.ff1(h), approximate="tanh"))


class BlockRunner(nn.Module):
    """Runs one reference block with a chosen attention; holds no parameters of its own."""

    def __init__(self, block: nn.Module, impl: str) -> None:
        super().__init__()
        self.block, self.impl = block, impl

    def forward(self, x, c, t6):
        return block_forward(self.block, x, c, t6, self.impl)


def model_forward(model: DiT, runners, latents, text, t):
    """reference_workload.DiT.forward, with the blocks run by `runners`."""
    x, c = model.patch(latents), model.caption(text)
    t6 = model.t2(F.silu(model.t1(model.timestep(t)))).view(-1, 6, model.shape.dim)
    for run in runners:
        x = run(x, c, t6)
    return model.out(F.rms_norm(x, (x.shape[-1],)))


class Workload:
    """One model, one AdamW, inputs per batch size, and a step function per configuration."""

    def __init__(self, shape: Shape, device: torch.device) -> None:
        torch.manual_seed(0)
        self.shape, self.device = shape, device
        self.model = DiT(shape).to(device)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-5, fused=device.type == "cuda")
        self.inputs: dict[int, tuple] = {}
        self.steps: dict[str, object] = {}
        self.graphs: dict[str, torch.cuda.CUDAGraph] = {}

    def params(self) -> int:
        return sum(p.numel() for p in self.model.parameters())

    def batch(self, n: int):
        if n not in self.inputs:
            s, dev = self.shape, self.device
            gen = torch.Generator(device=dev).manual_seed(n)
            self.inputs[n] = (
                torch.randn(n, s.video_tokens, s.latent_channels, device=dev, generator=gen),
                torch.randn(n, s.text_tokens, s.text_dim, device=dev, generator=gen),
                torch.randn(n, s.video_tokens, s.latent_channels, device=dev, generator=gen),
                torch.rand(n, device=dev, generator=gen) * 1000,
            )
        return self.inputs[n]

    def _set_optimizer(self, cfg: Config) -> None:
        cuda = self.device.type == "cuda"
        for group in self.opt.param_groups:
            if cfg.optim == "foreach":
                group.update(fused=False, foreach=True, capturable=cuda)
            else:
                group.update(fused=cuda, foreach=None if cuda else False, capturable=cfg.graphs and cuda)

    def _body(self, cfg: Config):
        runners = [BlockRunner(b, cfg.attn) for b in self.model.blocks]
        if cfg.compile == "blocks":
            runners = [torch.compile(r, dynamic=False) for r in runners]
        latents, text, target, t = self.batch(cfg.batch)
        autocast = torch.autocast(self.device.type, dtype=torch.bfloat16)
        sdpa = cfg.attn == "sdpa"

        def body():
            with autocast, sdpa_context(self.device) if sdpa else contextlib.nullcontext():
                pred = model_forward(self.model, runners, latents, text, t)
            loss = F.mse_loss(pred.float(), target)
            loss.backward()
            self.opt.step()
            return loss

        return body

    def step_fn(self, cfg: Config):
        """The training step of `cfg` (built once; a CUDA graph is captured on first use)."""
        key = cfg.key()
        if key in self.steps:
            return self.steps[key]
        body = self._body(cfg)
        if not cfg.graphs:

            def step():
                self._set_optimizer(cfg)
                loss = body()
                self.opt.zero_grad(set_to_none=True)
                return loss

        else:
            if self.device.type != "cuda":
                raise RuntimeError("CUDA graphs need a CUDA device")
            self._set_optimizer(cfg)
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    body()
                    self.opt.zero_grad(set_to_none=True)
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            self.opt.zero_grad(set_to_none=True)
            with torch.cuda.graph(graph):
                body()
            # The graph keeps its gradients' memory; Python drops its references, so an eager
            # step allocates its own again.
            self.opt.zero_grad(set_to_none=True)
            self.graphs[key] = graph

            def step():
                self._set_optimizer(cfg)
                graph.replay()

        self.steps[key] = step
        return step

    def drop(self, cfg: Config) -> None:
        self.steps.pop(cfg.key(), None)
        self.graphs.pop(cfg.key(), None)
        self.opt.zero_grad(set_to_none=True)
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
