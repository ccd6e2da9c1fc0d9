"""torch.optim.adam: the module of torch's Adam (``from torch.optim.adam import Adam``); ember keeps the optimizers
in algorithms.py."""
from .algorithms import Adam, adam

__all__ = ['Adam', 'adam']
