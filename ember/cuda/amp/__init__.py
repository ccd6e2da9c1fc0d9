"""``ember.cuda.amp`` (torch.cuda.amp): deprecated spellings of ``ember.amp.autocast('cuda', ...)``,
``ember.amp.GradScaler('cuda', ...)``, ``custom_fwd`` and ``custom_bwd``.

Each warns as torch does (FutureWarning). Without a CUDA device, autocast and the scaler then warn
again and disable themselves, as torch's do: they never pretend a GPU exists.
"""
from .autocast_mode import autocast, custom_fwd, custom_bwd
from .grad_scaler import GradScaler
from . import common  # noqa: F401

__all__ = ['autocast', 'GradScaler', 'custom_fwd', 'custom_bwd']
