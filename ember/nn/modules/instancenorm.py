"""torch.nn.modules.instancenorm's names; the classes live in normalization.py."""
from .normalization import (_InstanceNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,  # noqa: F401
                            LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d)

__all__ = ['InstanceNorm1d', 'InstanceNorm2d', 'InstanceNorm3d', 'LazyInstanceNorm1d', 'LazyInstanceNorm2d',
           'LazyInstanceNorm3d']
