"""torch.optim._adafactor: the module of torch's Adafactor (``from torch.optim._adafactor import Adafactor``)."""
from .adafactor import Adafactor, adafactor

__all__ = ['Adafactor', 'adafactor']
