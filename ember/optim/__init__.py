"""ember.optim: optimizers and learning-rate schedulers with torch.optim's API and state-dict layout."""
from .optimizer import Optimizer
from .algorithms import SGD, Adam, AdamW, RMSprop, Adagrad, Adamax, NAdam, RAdam, sgd, adam, rmsprop, adagrad, \
    adamax, nadam, radam, Adadelta, adadelta, Rprop, rprop, ASGD, asgd
from .lbfgs import LBFGS
from .adafactor import Adafactor, adafactor
from .sparse_adam import SparseAdam
from .muon import Muon
from . import lr_scheduler
from . import swa_utils

__all__ = ['Optimizer', 'SGD', 'Adam', 'AdamW', 'RMSprop', 'Adagrad', 'Adamax', 'NAdam', 'RAdam', 'LBFGS', 'Adadelta', 'Rprop', 'ASGD',
           'Adafactor', 'SparseAdam', 'Muon',
           'lr_scheduler', 'swa_utils']
