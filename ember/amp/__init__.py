"""Automatic mixed precision (torch.amp): ``autocast`` and ``GradScaler``.

``autocast`` switches the AutocastCPU dispatch key on for a region of code, so
the operators in torch's CPU lower-precision list run in bfloat16 or float16
and those in its float32 list in float32 (NOTE [autocast key]). ``GradScaler``
scales a loss before backward so small float16 gradients do not flush to
zero, then unscales them, skips steps whose gradients overflowed and adapts
the scale. Both are built on the public ember API only.
"""
from .autocast_mode import autocast, custom_fwd, custom_bwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ['autocast', 'custom_fwd', 'custom_bwd', 'is_autocast_available', 'GradScaler']
