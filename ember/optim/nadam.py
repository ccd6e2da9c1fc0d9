"""torch.optim.nadam: the module of torch's NAdam (``from torch.optim.nadam import NAdam``); ember keeps the optimizers
in algorithms.py."""
from .algorithms import NAdam, nadam

__all__ = ['NAdam', 'nadam']
