"""torch.nn.modules.batchnorm's names (``isinstance(m, nn.modules.batchnorm._BatchNorm)`` is common in
training scripts); the classes live in normalization.py."""
from .normalization import (_NormBase, _BatchNorm, BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm,  # noqa: F401
                            LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d)

__all__ = ['BatchNorm1d', 'BatchNorm2d', 'BatchNorm3d', 'SyncBatchNorm', 'LazyBatchNorm1d', 'LazyBatchNorm2d',
           'LazyBatchNorm3d']
