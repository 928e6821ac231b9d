"""The reference DiT workload with the campaign's knobs (issue #16).

The model, its parameters and its FLOP are those of `reference_workload.py` (fp32 master
parameters and AdamW state, bf16 autocast compute); what a configuration changes is how
a step runs:

- `attn`:     "sdpa" (PyTorch SDPA, cuDNN attention forced), "fa4" (flash-attn 4 through
              ledger's counted custom op, `ledger.collectors.flash.flash_attn_func`) or "mixed"
              (flash-attn 4 for self-attention, SDPA cuDNN for cross-attention);
- `compile`:  "none", "blocks" (torch.compile of each transformer block: regional) or "model"
              (one torch.compile of the whole forward: embeddings, blocks, output projection);
- `optim`:    "fused" (AdamW fused=True) or "foreach" (AdamW foreach, capturable), or, with
              bf16-copy weights, "overlap": the same bf16-copy AdamW pass, each parameter's
              run on a side stream as soon as the backward has accumulated its gradient
              (post-accumulate-grad hooks), so the optimizer's memory-bound passes overlap
              the backward of the blocks below instead of following it (`OverlapAdamW`);
- `weights`:  "autocast" (the forward casts each fp32 master weight to bf16, every step, and the
              weight gradient is cast back to fp32) or "bf16-copy" (the optimizer step writes a
              bf16 copy of every linear's weight and bias beside its fp32 master, the forward
              uses the copy and its gradient stays bf16: `Bf16CopyAdamW`);
- `graphs`:   False or True (the whole step, optimizer included, captured as one CUDA graph);
- `batch`:    samples per step;
- `proj`:     "separate" (one GEMM per projection) or "fused" (q/k/v as one GEMM, and the
              cross-attention's k/v as one: the bf16 copies of those weights are row blocks of
              one [3d, d] and one [2d, d] tensor the optimizer writes; bf16-copy weights only);
- `mode`:     how Inductor compiles: "default", "tuned" (pointwise and reduction kernels
              autotuned, with coordinate-descent tuning of their launch configs) or
              "max-autotune" (mode max-autotune-no-cudagraphs: the matmuls autotuned too,
              Triton templates against cuBLAS, epilogues fused where a template wins) or
              "graphs" (mode reduce-overhead: each compiled block's forward and backward
              replayed as CUDA graphs by Inductor's cudagraph trees; the step marked as one);
- `ffn`:      "inductor" (cuBLAS GEMMs, the tanh-GELU and its backward in Inductor's fusions) or
              "quack" (the GELU in the GEMMs' epilogues, quack's CuTe DSL GEMMs on Hopper: the ff1
              GEMM writes the pre-activation and the GELU of it in one kernel, and the ff2 input-
              gradient GEMM multiplies by GELU's derivative of the saved pre-activation and writes
              the recomputed activation for ff2's weight gradient in one kernel; the weight
              gradients and ff1's input gradient stay cuBLAS. Through ledger's counted custom ops
              `ledger::gemm_gelu` and `ledger::gemm_dgelu`, so the FLOP audit counts them and
              torch.compile keeps them opaque: `QuackFFN`).

Numerics are the same in both `weights` settings: autocast rounds the same fp32 master to
bf16 (round to nearest even) and its matmul writes a bf16 weight gradient before the cast
back to fp32, so the fp32 AdamW update sees the same values; only the passes over memory
differ (a cast of 2.27 B weights each forward and of their gradients each backward, against
one bf16 write inside the optimizer's own pass).

One model and one optimizer serve every configuration, so the arms of a sandwich differ
only by the knob under test.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import asdict, dataclass, replace

import torch
import torch.nn as nn
import torch.nn.functional as F
from reference_workload import DiT, Shape, _rms
from torch.utils.flop_counter import register_flop_formula

from ledger.collectors.flash import flash_attn_func

ATTN_LABELS = {"sdpa": "SDPA cuDNN", "fa4": "flash-attn 4", "mixed": "flash-attn 4 self + cuDNN cross"}
COMPILE_LABELS = {"none": "eager", "blocks": "compiled blocks", "model": "compiled model"}
MODE_LABELS = {
    "default": None,
    "tuned": "pointwise autotuned",
    "max-autotune": "max-autotune",
    "graphs": "CUDA-graphed blocks",
}
#: torch.compile's arguments per `mode`.
COMPILE_MODES: dict[str, dict] = {
    "default": {},
    "tuned": {"options": {"max_autotune_pointwise": True, "coordinate_descent_tuning": True}},
    "max-autotune": {"mode": "max-autotune-no-cudagraphs"},
    "graphs": {"mode": "reduce-overhead"},
}


@dataclass(frozen=True)
class Config:
    attn: str = "sdpa"
    compile: str = "none"
    optim: str = "fused"
    graphs: bool = False
    batch: int = 2
    weights: str = "autocast"
    proj: str = "separate"
    mode: str = "default"
    ffn: str = "inductor"

    def key(self) -> str:
        return (
            f"{self.attn}/{self.compile}/{self.optim}/{self.weights}/"
            f"{'graphs' if self.graphs else 'eager-launch'}/b{self.batch}/{self.proj}/{self.mode}/{self.ffn}"
        )

    def label(self) -> str:
        parts = [
            ATTN_LABELS[self.attn],
            COMPILE_LABELS[self.compile] + (f" ({MODE_LABELS[self.mode]})" if MODE_LABELS[self.mode] else ""),
            "fused q/k/v and cross k/v projections" if self.proj == "fused" else None,
            "FFN GEMMs with GELU epilogues (quack)" if self.ffn == "quack" else None,
            (
                "fused AdamW writing bf16 weights"
                + (" overlapped with the backward" if self.optim == "overlap" else "")
                if self.weights == "bf16-copy"
                else f"{self.optim} AdamW"
            ),
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
    """`impl` is "fa4" or "sdpa" for one call ("mixed" picks per call in block_forward)."""
    b, sq, d = q.shape
    sk = k.shape[1]
    q, k, v = q.view(b, sq, heads, d // heads), k.view(b, sk, heads, d // heads), v.view(b, sk, heads, d // heads)
    if impl == "fa4":
        return flash_attn_func(q, k, v).reshape(b, sq, d)
    out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
    return out.transpose(1, 2).reshape(b, sq, d)


def self_cross(impl: str) -> tuple[str, str]:
    """The kernel of the self- and the cross-attention of a block under `impl`."""
    return {"sdpa": ("sdpa", "sdpa"), "fa4": ("fa4", "fa4"), "mixed": ("fa4", "sdpa")}[impl]


class Linears:
    """Where a forward finds each nn.Linear's weight and bias: the module's own fp32 master
    parameters (autocast casts them), or the bf16 copies `Bf16CopyAdamW` writes, kept on the
    module as `w16` and `b16` (plain tensor attributes, so `model.parameters()` stays the fp32
    masters and torch.compile sees them as inputs of the graph)."""

    def __init__(self, bf16: bool = False) -> None:
        self.bf16 = bf16

    def __call__(self, lin: nn.Module, x):
        if self.bf16:
            return F.linear(x, lin.w16, lin.b16)
        return lin(x)

    def many(self, block: nn.Module, names: tuple[str, ...], x) -> list:
        """The projections `names` of `block` applied to one input `x`, one GEMM each."""
        return [self(getattr(block, n), x) for n in names]

    def weights(self, lin: nn.Module) -> tuple:
        """(weight, bias) the forward uses for `lin`: the bf16 copies, or the fp32 masters."""
        return (lin.w16, lin.b16) if self.bf16 else (lin.weight, lin.bias)


class FusedLinears(Linears):
    """bf16 copies as `Linears(bf16=True)`, except that the projections of one input run as one
    GEMM: `block.<group>16` is the [len(names) * d, d] bf16 weight whose row blocks are the copies
    of `names` (and `block.<group>b16` their biases), written by the optimizer like any copy."""

    GROUPS = {("q", "k", "v"): "qkv", ("xk", "xv"): "xkv"}

    def __init__(self) -> None:
        super().__init__(bf16=True)

    def many(self, block: nn.Module, names: tuple[str, ...], x) -> list:
        group = self.GROUPS.get(names)
        if group is None:
            return super().many(block, names, x)
        out = F.linear(x, getattr(block, f"{group}16"), getattr(block, f"{group}b16"))
        return list(out.split(out.shape[-1] // len(names), dim=-1))


OWN = Linears()

_GELU_C = math.sqrt(2.0 / math.pi)


def _gelu_tanh_grad(pre: torch.Tensor) -> torch.Tensor:
    """d/dx of F.gelu(x, approximate="tanh"), in fp32 (the CPU path of `ledger::gemm_dgelu`)."""
    x = pre.float()
    t = torch.tanh(_GELU_C * (x + 0.044715 * x**3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _GELU_C * (1 + 3 * 0.044715 * x * x)


@torch.library.custom_op("ledger::gemm_gelu", mutates_args=())
def gemm_gelu(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(x @ w.T + b, its tanh-GELU) for x (M, K), w (N, K), b (N,): on CUDA one quack GEMM whose
    epilogue adds the bias in fp32, stores the pre-activation and the GELU of it (bf16)."""
    if x.is_cuda:
        from quack.gemm_interface import gemm_act

        pre, post = gemm_act(
            x.contiguous(), w.contiguous().T, bias=b, activation="gelu_tanh_approx", store_preact=True, tuned=False
        )
        return pre, post
    pre = F.linear(x, w, b)
    return pre, F.gelu(pre, approximate="tanh")


@gemm_gelu.register_fake
def _(x, w, b):
    return x.new_empty((x.shape[0], w.shape[0])), x.new_empty((x.shape[0], w.shape[0]))


@torch.library.custom_op("ledger::gemm_dgelu", mutates_args=())
def gemm_dgelu(dout: torch.Tensor, w: torch.Tensor, pre: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """((dout @ w) * GELU'(pre), GELU(pre)) for dout (M, N), w (N, K), pre (M, K): the input gradient
    of a linear that follows a tanh-GELU, and the activation recomputed for the linear's weight
    gradient; on CUDA one quack GEMM with both in its epilogue."""
    if dout.is_cuda:
        from quack.gemm_interface import gemm_dact

        dpre, post = gemm_dact(
            dout.contiguous(), w.contiguous(), pre.contiguous(), activation="gelu_tanh_approx", tuned=False
        )
        return dpre, post
    dpre = (dout.float() @ w.float()) * _gelu_tanh_grad(pre)
    return dpre.to(pre.dtype), F.gelu(pre.float(), approximate="tanh").to(pre.dtype)


@gemm_dgelu.register_fake
def _(dout, w, pre):
    return torch.empty_like(pre), torch.empty_like(pre)


def _linear_flop(x_shape, w_shape, *args, **kwargs) -> int:
    return 2 * math.prod(x_shape[:-1]) * x_shape[-1] * w_shape[0]


def _dgelu_flop(dout_shape, w_shape, *args, **kwargs) -> int:
    return 2 * math.prod(dout_shape[:-1]) * w_shape[0] * w_shape[1]


# FlopCounterMode counts the two GEMMs as the aten linear they replace (2*M*K*N each).
register_flop_formula(torch.ops.ledger.gemm_gelu)(_linear_flop)
register_flop_formula(torch.ops.ledger.gemm_dgelu)(_dgelu_flop)


class QuackFFN(torch.autograd.Function):
    """ff2(gelu_tanh(ff1(h))) with the GELU inside the GEMMs (`ledger::gemm_gelu` forward,
    `ledger::gemm_dgelu` for ff2's input gradient); inputs in one dtype (bf16 under autocast).
    Saved: h, the pre-activation and both weights (the activation is recomputed by the
    backward GEMM's epilogue, as Inductor's partitioner recomputes it)."""

    @staticmethod
    def forward(ctx, h, w1, b1, w2, b2):
        x = h.reshape(-1, h.shape[-1])
        pre, post = torch.ops.ledger.gemm_gelu(x, w1, b1)
        out = F.linear(post, w2, b2)
        ctx.save_for_backward(x, w1, pre, w2)
        return out.view(*h.shape[:-1], w2.shape[0])

    @staticmethod
    def backward(ctx, dout):
        x, w1, pre, w2 = ctx.saved_tensors
        d = dout.reshape(-1, dout.shape[-1])
        dpre, post = torch.ops.ledger.gemm_dgelu(d, w2, pre)
        dw2 = d.t().mm(post)
        dh = dpre.mm(w1)
        dw1 = dpre.t().mm(x)
        return dh.view(*dout.shape[:-1], w1.shape[1]), dw1, dpre.sum(0), dw2, d.sum(0)


def ffn_forward(block: nn.Module, h, lin: Linears, ffn: str):
    """The block's FFN: Inductor's GELU between two cuBLAS linears, or `QuackFFN`."""
    if ffn != "quack":
        return lin(block.ff2, F.gelu(lin(block.ff1, h), approximate="tanh"))
    (w1, b1), (w2, b2) = lin.weights(block.ff1), lin.weights(block.ff2)
    kind = h.device.type
    dtype = torch.get_autocast_dtype(kind) if torch.is_autocast_enabled(kind) else h.dtype
    return QuackFFN.apply(*(t.to(dtype) for t in (h, w1, b1, w2, b2)))


def block_forward(block: nn.Module, x, c, t6, impl: str, lin: Linears = OWN, ffn: str = "inductor"):
    """reference_workload.Block.forward with the attention implementation, the weights' source and
    the FFN's kernels as arguments."""
    self_impl, cross_impl = self_cross(impl)
    shift_a, scale_a, gate_a, shift_f, scale_f, gate_f = (block.scale_shift[None] + t6).unbind(1)
    h = F.rms_norm(x, (x.shape[-1],)) * (1 + scale_a[:, None]) + shift_a[:, None]
    q, k, v = lin.many(block, ("q", "k", "v"), h)
    a = attention(_rms(q, block.q_norm), _rms(k, block.k_norm), v.contiguous(), block.heads, self_impl)
    x = x + gate_a[:, None] * lin(block.o, a)
    h = F.rms_norm(x, (x.shape[-1],))
    xk, xv = lin.many(block, ("xk", "xv"), c)
    a = attention(
        _rms(lin(block.xq, h), block.xq_norm), _rms(xk, block.xk_norm), xv.contiguous(), block.heads, cross_impl
    )
    x = x + lin(block.xo, a)
    h = F.rms_norm(x, (x.shape[-1],)) * (1 + scale_f[:, None]) + shift_f[:, None]
    return x + gate_f[:, None] * ffn_forward(block, h, lin, ffn)


class BlockRunner(nn.Module):
    """Runs one reference block with a chosen attention; holds no parameters of its own."""

    def __init__(self, block: nn.Module, impl: str, lin: Linears = OWN, ffn: str = "inductor") -> None:
        super().__init__()
        self.block, self.impl, self.lin, self.ffn = block, impl, lin, ffn

    def forward(self, x, c, t6):
        return block_forward(self.block, x, c, t6, self.impl, self.lin, self.ffn)


def model_forward(model: DiT, runners, latents, text, t, lin: Linears = OWN):
    """reference_workload.DiT.forward, with the blocks run by `runners`."""
    x, c = lin(model.patch, latents), lin(model.caption, text)
    t6 = lin(model.t2, F.silu(lin(model.t1, model.timestep(t)))).view(-1, 6, model.shape.dim)
    for run in runners:
        x = run(x, c, t6)
    return lin(model.out, F.rms_norm(x, (x.shape[-1],)))


class Bf16CopyAdamW:
    """AdamW over the fp32 masters of `torch.optim.AdamW` (its state, its hyperparameters), for
    parameters whose gradient arrives on a bf16 copy: one pass per parameter reads the fp32
    master, the bf16 gradient and the fp32 moments, and writes the master, the moments and the
    bf16 copy the next forward uses. The same update as torch's AdamW (decoupled weight decay,
    bias-corrected moments; `adamw_reference` is it in plain torch, for the check and the CPU).
    On CUDA the pass is one Triton kernel per parameter (`benchmarks/gpu/bf16_adamw.py`)."""

    def __init__(
        self,
        opt: torch.optim.AdamW,
        copies: dict[torch.Tensor, torch.Tensor],
        grads: dict[torch.Tensor, tuple[torch.Tensor, slice]] | None = None,
    ) -> None:
        self.opt, self.copies = opt, copies  # fp32 master parameter -> its bf16 copy (a leaf, or a row block of one)
        # master -> (the fused bf16 leaf, the rows of it that are this master's copy), for copies
        # that are row blocks of one leaf: their gradient is those rows of the leaf's gradient.
        self.grads = grads or {}
        self.leaves = list({id(leaf): leaf for leaf, _ in self.grads.values()}.values())

    def grad_of(self, p: torch.Tensor):
        if p in self.grads:
            leaf, rows = self.grads[p]
            return None if leaf.grad is None else leaf.grad[rows]
        copy = self.copies.get(p)
        return copy.grad if copy is not None else p.grad

    @torch.no_grad()
    def step(self) -> None:
        for group in self.opt.param_groups:
            for p in group["params"]:
                self.step_param(p, group)

    @torch.no_grad()
    def step_param(self, p: torch.Tensor, group: dict) -> None:
        """The update of one parameter (its gradient arrived): master, moments and bf16 copy."""
        lr, (beta1, beta2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        copy = self.copies.get(p)
        grad = self.grad_of(p)
        if grad is None:
            return
        state = self.opt.state[p]
        if not state:
            state["step"] = torch.zeros((), dtype=torch.float32, device=p.device)
            state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
        state["step"] += 1
        step = int(state["step"].item()) if p.device.type == "cpu" else None
        if step is None:
            # The step count lives on the device (fused AdamW keeps it there); read once per
            # call from the host mirror instead of syncing per parameter.
            step = self._host_step(p)
        bc1 = 1 - beta1**step
        bc2_sqrt = math.sqrt(1 - beta2**step)
        fused_step(p, grad, state["exp_avg"], state["exp_avg_sq"], copy, lr, beta1, beta2, eps, wd, bc1, bc2_sqrt)

    def _host_step(self, p: torch.Tensor) -> int:
        steps = self.__dict__.setdefault("_steps", {})
        if p not in steps:
            steps[p] = int(self.opt.state[p]["step"].item())
        else:
            steps[p] += 1
        return steps[p]

    def refresh(self) -> None:
        """Write every copy from its master (when this arm starts after another updated the masters)."""
        with torch.no_grad():
            for p, copy in self.copies.items():
                copy.copy_(p)
        self.__dict__.pop("_steps", None)


class OverlapAdamW:
    """`Bf16CopyAdamW`'s update, each parameter's issued as soon as its gradient is accumulated.

    A post-accumulate-grad hook on every leaf that receives a gradient (the bf16 copy of a
    linear's weight or bias, the fp32 master of the rest) runs `step_param` for its master
    on a side stream that first waits for the backward stream, so the update's passes over
    memory (28 bytes per parameter) run beside the backward of the blocks below it instead
    of after the whole backward. The hooks act only between `arm()` and `finish()`, so a
    configuration without overlap sharing the same copies is untouched. `finish()` makes
    the main stream wait for the side stream (the step's time includes every update) and
    updates any parameter whose hook did not fire. The update is the same per parameter;
    only when it is issued changes.
    """

    def __init__(self, inner: Bf16CopyAdamW) -> None:
        self.inner = inner
        self.active = False
        self.done: set[int] = set()
        self.fired_in_backward = 0
        self.side = torch.cuda.Stream() if torch.cuda.is_available() else None
        self.handles = []
        for group in inner.opt.param_groups:
            for p in group["params"]:
                leaf = self._leaf(p)
                if leaf is not None:
                    self.handles.append(leaf.register_post_accumulate_grad_hook(self._hook(p, group)))

    def _leaf(self, p: torch.Tensor):
        """The tensor whose gradient is `p`'s: its bf16 copy (a leaf), else `p` itself."""
        if p in self.inner.grads:
            return None  # row blocks of a fused leaf: updated in finish()
        return self.inner.copies.get(p, p)

    def _hook(self, p: torch.Tensor, group: dict):
        def hook(_leaf: torch.Tensor) -> None:
            if not self.active or id(p) in self.done:
                return
            self.done.add(id(p))
            if self.side is None or p.device.type != "cuda":
                self.inner.step_param(p, group)
                return
            self.side.wait_stream(torch.cuda.current_stream(p.device))
            with torch.cuda.stream(self.side):
                self.inner.step_param(p, group)

        return hook

    def arm(self) -> None:
        self.active, self.done = True, set()

    def finish(self) -> None:
        self.active = False
        self.fired_in_backward = len(self.done)
        if self.side is not None:
            torch.cuda.current_stream().wait_stream(self.side)
        for group in self.inner.opt.param_groups:
            for p in group["params"]:
                if id(p) not in self.done:
                    self.inner.step_param(p, group)

    def remove(self) -> None:
        for h in self.handles:
            h.remove()
        self.handles = []


def adamw_reference(p, grad, exp_avg, exp_avg_sq, copy, lr, beta1, beta2, eps, wd, bc1, bc2_sqrt) -> None:
    """torch.optim.AdamW's update (its single-tensor path), in place, then the bf16 copy."""
    g = grad.float()
    p.mul_(1 - lr * wd)
    exp_avg.lerp_(g, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
    denom = (exp_avg_sq.sqrt() / bc2_sqrt).add_(eps)
    p.addcdiv_(exp_avg, denom, value=-lr / bc1)
    if copy is not None:
        copy.copy_(p)


def fused_step(p, grad, exp_avg, exp_avg_sq, copy, lr, beta1, beta2, eps, wd, bc1, bc2_sqrt) -> None:
    if p.device.type == "cuda":
        from bf16_adamw import adamw_bf16_copy

        adamw_bf16_copy(p, grad, exp_avg, exp_avg_sq, copy, lr, beta1, beta2, eps, wd, bc1, bc2_sqrt)
    else:
        adamw_reference(p, grad, exp_avg, exp_avg_sq, copy, lr, beta1, beta2, eps, wd, bc1, bc2_sqrt)


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
        self.overlaps: dict[str, OverlapAdamW] = {}  # config key -> its hooks (removed in drop)
        self._bf16: tuple[Linears, Bf16CopyAdamW] | None = None
        self._fused: tuple[Linears, Bf16CopyAdamW] | None = None
        self.active: str | None = None  # the key of the configuration that stepped last

    def bf16_copies(self) -> tuple[Linears, Bf16CopyAdamW]:
        """The bf16 copies of every nn.Linear's weight and bias (leaves the forward uses, set on
        the module as `w16`/`b16`) and the optimizer that writes them; made once, 4.5 GB at the
        reference shapes."""
        if self._bf16 is None:
            masters: dict[torch.Tensor, torch.Tensor] = {}
            for mod in self.model.modules():
                if isinstance(mod, nn.Linear):
                    mod.w16 = mod.weight.detach().to(torch.bfloat16).requires_grad_(True)
                    masters[mod.weight] = mod.w16
                    mod.b16 = None
                    if mod.bias is not None:
                        mod.b16 = mod.bias.detach().to(torch.bfloat16).requires_grad_(True)
                        masters[mod.bias] = mod.b16
            self._bf16 = (Linears(bf16=True), Bf16CopyAdamW(self.opt, masters))
        return self._bf16

    def fused_copies(self) -> tuple[Linears, Bf16CopyAdamW]:
        """The bf16 copies with each block's q/k/v weights as row blocks of one [3d, d] leaf and
        its cross-attention k/v as one [2d, d] (biases likewise), the other linears' copies shared
        with `bf16_copies`, and the optimizer that writes them all; 1.3 GB more at the reference
        shapes (the grouped weights are copied twice: once per layout)."""
        if self._fused is None:
            _, base = self.bf16_copies()
            copies = dict(base.copies)
            grads: dict[torch.Tensor, tuple[torch.Tensor, slice]] = {}
            for block in self.model.blocks:
                for names, group in FusedLinears.GROUPS.items():
                    mods = [getattr(block, n) for n in names]
                    for attr, params in (("16", [m.weight for m in mods]), ("b16", [m.bias for m in mods])):
                        leaf = torch.cat([p.detach() for p in params]).to(torch.bfloat16).requires_grad_(True)
                        setattr(block, f"{group}{attr}", leaf)
                        start = 0
                        for p in params:
                            rows = slice(start, start + p.shape[0])
                            copies[p], grads[p] = leaf.detach()[rows], (leaf, rows)
                            start += p.shape[0]
            self._fused = (FusedLinears(), Bf16CopyAdamW(self.opt, copies, grads))
        return self._fused

    def zero_grad(self) -> None:
        self.opt.zero_grad(set_to_none=True)
        for held in (self._bf16, self._fused):
            if held is not None:
                for copy in held[1].copies.values():
                    copy.grad = None
                for leaf in held[1].leaves:
                    leaf.grad = None

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

    def copies_for(self, cfg: Config) -> tuple[Linears, Bf16CopyAdamW | None]:
        if cfg.weights != "bf16-copy":
            if cfg.proj != "separate":
                raise RuntimeError("fused projections are built on the bf16 weight copies only")
            return OWN, None
        return self.fused_copies() if cfg.proj == "fused" else self.bf16_copies()

    def _body(self, cfg: Config):
        lin, bf16_opt = self.copies_for(cfg)
        runners = [BlockRunner(b, cfg.attn, lin, cfg.ffn) for b in self.model.blocks]
        how = COMPILE_MODES[cfg.mode]
        if cfg.compile == "blocks":
            runners = [torch.compile(r, dynamic=False, **how) for r in runners]
        forward = model_forward
        if cfg.compile == "model":
            forward = torch.compile(model_forward, dynamic=False, **how)
        latents, text, target, t = self.batch(cfg.batch)
        autocast = torch.autocast(self.device.type, dtype=torch.bfloat16)
        sdpa = cfg.attn in ("sdpa", "mixed")
        opt_step = bf16_opt.step if bf16_opt is not None else self.opt.step
        overlap = None
        if cfg.optim == "overlap":
            if bf16_opt is None:
                raise RuntimeError("the overlapped optimizer is built on the bf16 weight copies only")
            overlap = self.overlaps.get(cfg.key()) or OverlapAdamW(bf16_opt)
            self.overlaps[cfg.key()] = overlap

        def body():
            if cfg.mode == "graphs":
                # One step is one generation of the cudagraph trees: outputs of the last
                # step's replays may be overwritten from here on.
                torch.compiler.cudagraph_mark_step_begin()
            with autocast, sdpa_context(self.device) if sdpa else contextlib.nullcontext():
                pred = forward(self.model, runners, latents, text, t, lin)
            loss = F.mse_loss(pred.float(), target)
            if overlap is not None:
                overlap.arm()
                loss.backward()
                overlap.finish()
            else:
                loss.backward()
                opt_step()
            return loss

        return body

    def enter(self, cfg: Config) -> None:
        """Before a step of `cfg` after a step of another configuration: the bf16 copies are
        rewritten from the masters the other configuration updated (a warmup step pays it)."""
        if self.active != cfg.key() and cfg.weights == "bf16-copy":
            self.copies_for(cfg)[1].refresh()  # type: ignore[union-attr]
        self.active = cfg.key()

    def step_fn(self, cfg: Config):
        """The training step of `cfg` (built once; a CUDA graph is captured on first use)."""
        key = cfg.key()
        if key in self.steps:
            return self.steps[key]
        body = self._body(cfg)
        if not cfg.graphs:

            def step():
                self.enter(cfg)
                self._set_optimizer(cfg)
                loss = body()
                self.zero_grad()
                return loss

        else:
            if self.device.type != "cuda":
                raise RuntimeError("CUDA graphs need a CUDA device")
            if cfg.weights != "autocast":
                raise RuntimeError("a CUDA graph of the step is built for autocast weights only")
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
        if cfg.key() in self.overlaps:
            self.overlaps.pop(cfg.key()).remove()
        self.graphs.pop(cfg.key(), None)
        self.zero_grad()
        kept = [k.split("/") for k in self.steps]
        if cfg.proj == "fused" and not any(k[3] == "bf16-copy" and k[6] == "fused" for k in kept):
            for block in self.model.blocks:
                for group in FusedLinears.GROUPS.values():
                    setattr(block, f"{group}16", None)
                    setattr(block, f"{group}b16", None)
            self._fused = None  # the grouped copies' 1.3 GB go back
        if cfg.weights == "bf16-copy" and not any(k[3] == "bf16-copy" for k in kept):
            for mod in self.model.modules():
                if isinstance(mod, nn.Linear):
                    mod.w16 = mod.b16 = None
            self._bf16 = self._fused = None  # the copies' 4.5 GB go back when no kept configuration uses them
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
