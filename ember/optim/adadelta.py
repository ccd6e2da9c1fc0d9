"""torch.optim.adadelta: the module of torch's Adadelta (``from torch.optim.adadelta import Adadelta``); ember keeps the optimizers
in algorithms.py."""
from .algorithms import Adadelta, adadelta

__all__ = ['Adadelta', 'adadelta']
