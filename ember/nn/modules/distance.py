"""torch.nn.modules.distance's names; the classes live in misc.py."""
from .misc import CosineSimilarity, PairwiseDistance  # noqa: F401

__all__ = ['CosineSimilarity', 'PairwiseDistance']
