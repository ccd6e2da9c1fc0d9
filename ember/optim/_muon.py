"""torch.optim._muon: the module of torch's Muon (``from torch.optim._muon import Muon``)."""
from .muon import Muon

__all__ = ['Muon']
