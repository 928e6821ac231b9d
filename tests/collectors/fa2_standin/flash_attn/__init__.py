"""A CPU stand-in for flash-attn 2, for ledger's tests.

Like flash-attn 2.7 and later, it registers the custom ops `flash_attn::_flash_attn_forward`
and `flash_attn::_flash_attn_backward` (the same schemas: dropout, window and softcap
arguments, dq/dk/dv written in place) and its `flash_attn_func` is an autograd Function
that calls them. The math is exact attention with explicit matmuls, in fp32.
"""

from .flash_attn_interface import flash_attn_func

__version__ = "2.8.3+standin"
__all__ = ["flash_attn_func"]
