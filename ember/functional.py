"""``torch.functional``: the module torch defines some of its Python-level functions in (``import
torch.functional as F; F.einsum(...)``). They are ember's top-level functions; this module names them."""
import ember

__all__ = ['atleast_1d', 'atleast_2d', 'atleast_3d', 'block_diag', 'broadcast_shapes', 'broadcast_tensors',
           'cartesian_prod', 'cdist', 'chain_matmul', 'einsum', 'istft', 'lu', 'meshgrid', 'norm', 'pca_lowrank',
           'split', 'stft', 'svd_lowrank', 'tensordot', 'unique', 'unique_consecutive', 'unravel_index']


def __getattr__(name):
    if name in __all__:
        return getattr(ember, name)
    raise AttributeError(f"module 'ember.functional' has no attribute '{name}'")


def __dir__():
    return sorted(__all__)
