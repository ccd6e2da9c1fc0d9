"""torch.optim.asgd: the module of torch's ASGD (``from torch.optim.asgd import ASGD``); ember keeps the optimizers
in algorithms.py."""
from .algorithms import ASGD, asgd

__all__ = ['ASGD', 'asgd']
