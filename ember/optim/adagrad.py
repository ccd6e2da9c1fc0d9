"""torch.optim.adagrad: the module of torch's Adagrad (``from torch.optim.adagrad import Adagrad``); ember keeps the optimizers
in algorithms.py."""
from .algorithms import Adagrad, adagrad

__all__ = ['Adagrad', 'adagrad']
