"""torch.optim.adamax: the module of torch's Adamax (``from torch.optim.adamax import Adamax``); ember keeps the optimizers
in algorithms.py."""
from .algorithms import Adamax, adamax

__all__ = ['Adamax', 'adamax']
