"""torch.optim.sgd: the module of torch's SGD (``from torch.optim.sgd import SGD``); ember keeps the optimizers
in algorithms.py."""
from .algorithms import SGD, sgd

__all__ = ['SGD', 'sgd']
