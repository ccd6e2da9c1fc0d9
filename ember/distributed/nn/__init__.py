"""torch.distributed.nn: the collectives autograd differentiates (NOTE [differentiable collectives])."""
from .functional import (all_gather, all_reduce, all_to_all, all_to_all_single, broadcast, gather, reduce,  # noqa: F401
                         reduce_scatter, scatter)
from . import functional  # noqa: F401
