"""``torch.distributed.algorithms.model_averaging``: average model parameters across ranks after optimizer
steps (``averagers.PeriodicModelAverager``, ``utils.average_parameters``), for post-local SGD."""
from . import utils, averagers  # noqa: F401
