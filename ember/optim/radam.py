"""torch.optim.radam: the module of torch's RAdam (``from torch.optim.radam import RAdam``); ember keeps the optimizers
in algorithms.py."""
from .algorithms import RAdam, radam

__all__ = ['RAdam', 'radam']
