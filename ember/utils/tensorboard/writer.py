"""``torch.utils.tensorboard.writer``: where torch defines the writers (libraries import them from here: sbi);
ember's are in this package's ``__init__``."""
from . import SummaryWriter, FileWriter  # noqa: F401

__all__ = ['SummaryWriter', 'FileWriter']
