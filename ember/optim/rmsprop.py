"""torch.optim.rmsprop: the module of torch's RMSprop (``from torch.optim.rmsprop import RMSprop``); ember keeps the optimizers
in algorithms.py."""
from .algorithms import RMSprop, rmsprop

__all__ = ['RMSprop', 'rmsprop']
