"""torch.optim.adamw: the module of torch's AdamW (``from torch.optim.adamw import AdamW``); ember keeps the optimizers
in algorithms.py."""
from .algorithms import AdamW, adamw

__all__ = ['AdamW', 'adamw']
