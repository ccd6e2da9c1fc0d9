"""ember.nn: modules, layers and losses."""
from . import functional
