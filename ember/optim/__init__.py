"""ember.optim: optimizers and learning-rate schedulers with torch.optim's API and state-dict layout."""
from .optimizer import Optimizer
# the functional updates (adam, sgd, ...) live in torch's per-algorithm modules (torch.optim.adam.adam), which
# ember's adam.py, sgd.py, ... re-export from algorithms.py; as in torch, the package holds only the classes
from .algorithms import SGD, Adam, AdamW, RMSprop, Adagrad, Adamax, NAdam, RAdam, Adadelta, Rprop, ASGD
from .lbfgs import LBFGS
from .adafactor import Adafactor
from .sparse_adam import SparseAdam
from .muon import Muon
from . import lr_scheduler
from . import swa_utils

__all__ = ['Optimizer', 'SGD', 'Adam', 'AdamW', 'RMSprop', 'Adagrad', 'Adamax', 'NAdam', 'RAdam', 'LBFGS', 'Adadelta', 'Rprop', 'ASGD',
           'Adafactor', 'SparseAdam', 'Muon',
           'lr_scheduler', 'swa_utils']
