"""A CPU stand-in for flash-attn 4 (`flash_attn.cute`), for ledger's tests.

It has flash-attn 4's signatures (`flash_attn_func(q, k, v, softmax_scale=None,
causal=False, ...) -> (out, lse)` on (batch, seq, heads, dim) tensors, and the
`interface._flash_attn_fwd` / `_flash_attn_bwd` functions its autograd Function calls)
and computes exact attention with explicit matmuls. Like flash-attn 4 it is a
namespace package (no `flash_attn/__init__.py`), so `from flash_attn import
flash_attn_func` (flash-attn 2) fails beside it.
"""

from .interface import flash_attn_func

__version__ = "0.0.0+standin"
__all__ = ["flash_attn_func"]
