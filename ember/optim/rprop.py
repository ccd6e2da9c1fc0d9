"""torch.optim.rprop: the module of torch's Rprop (``from torch.optim.rprop import Rprop``); ember keeps the optimizers
in algorithms.py."""
from .algorithms import Rprop, rprop

__all__ = ['Rprop', 'rprop']
