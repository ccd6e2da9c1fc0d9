"""Normalisation layers: ``BatchNorm1d/2d/3d`` (running statistics, ``num_batches_tracked``, cumulative
average when ``momentum=None``), ``LayerNorm``, ``GroupNorm``, ``RMSNorm``, ``InstanceNorm1d/2d``,
``LocalResponseNorm`` and the legacy ``CrossMapLRN2d``."""
import numbers
from ember._warn import warnings

from ... import _functions as _E
from ... import int64
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter, UninitializedBuffer
from .lazy import LazyModuleMixin
from .module import Module
from ._functions import CrossMapLRN2d as _cross_map_lrn2d

__all__ = ['BatchNorm1d', 'BatchNorm2d', 'BatchNorm3d', 'LayerNorm', 'GroupNorm', 'RMSNorm', 'InstanceNorm1d',
           'InstanceNorm2d', 'InstanceNorm3d', 'LocalResponseNorm', 'CrossMapLRN2d', 'LazyBatchNorm1d',
           'LazyBatchNorm2d', 'LazyBatchNorm3d', 'LazyInstanceNorm1d', 'LazyInstanceNorm2d', 'LazyInstanceNorm3d']


def _affine_params(module, shape, affine, bias, device, dtype):
    """``weight`` (and ``bias``) of ``shape`` when ``affine``, else registered as None, as every norm layer has."""
    if affine:
        module.weight = Parameter(_E.empty(shape, device=device, dtype=dtype))
        if bias:
            module.bias = Parameter(_E.empty(shape, device=device, dtype=dtype))
        else:
            module.register_parameter('bias', None)
    else:
        module.register_parameter('weight', None)
        module.register_parameter('bias', None)


def _reset_affine(module, affine):
    if affine:
        init.ones_(module.weight)
        if module.bias is not None:
            init.zeros_(module.bias)



class _NormBase(Module):
    _version = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_params(self, num_features, affine, bias, device, dtype)
        if self.track_running_stats:
            self.register_buffer('running_mean', _E.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer('running_var', _E.ones(num_features, device=device, dtype=dtype))
            self.register_buffer('num_batches_tracked', _E.zeros((), dtype=int64, device=device))
        else:
            self.register_buffer('running_mean', None)
            self.register_buffer('running_var', None)
            self.register_buffer('num_batches_tracked', None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self):
        self.reset_running_stats()
        _reset_affine(self, self.affine)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return ('{num_features}, eps={eps}, momentum={momentum}, affine={affine}, bias={use_bias}, '
                'track_running_stats={track_running_stats}'.format(**self.__dict__, use_bias=self.bias is not None))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get('version', None)
        if (version is None or version < 2) and self.track_running_stats:
            # checkpoints from before num_batches_tracked existed: start it at 0
            key = prefix + 'num_batches_tracked'
            if key not in state_dict:
                state_dict[key] = self.num_batches_tracked if self.num_batches_tracked is not None and \
                    not self.num_batches_tracked.is_meta else _E.zeros((), dtype=int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_stats = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_stats else None,
                            self.running_var if use_stats else None, self.weight, self.bias, bn_training, factor,
                            self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over (N, C) or (N, C, L) inputs.

    >>> import ember
    >>> bn = ember.nn.BatchNorm1d(3)
    >>> _ = bn(ember.randn(8, 3)); int(bn.num_batches_tracked)
    1
    """

    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class SyncBatchNorm(_BatchNorm):
    """torch.nn.SyncBatchNorm: a batch norm over (N, C, ...) whose training statistics torch reduces across the
    ranks of a process group. As torch's on a CPU, it is a plain batch norm while no process group is
    initialized, and raises torch's error for a CPU input once one is; for the program's "cuda" tensors of
    ``ember run --cuda-as-cpu`` with more than one rank it raises NotImplementedError: the reduction of the
    statistics (ember's MPI collectives could carry it) is not built."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        if bn_training and self.training:
            from ... import distributed as dist
            if dist.is_available() and dist.is_initialized():
                if input.device.type != 'cuda':
                    raise ValueError("SyncBatchNorm expected input tensor to be on GPU or XPU or privateuseone")
                if dist.get_world_size(self.process_group) > 1:
                    raise NotImplementedError("ember's SyncBatchNorm does not reduce the batch statistics across "
                                              "ranks; use BatchNorm (per-rank statistics) instead")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """Every BatchNorm*D in ``module`` (itself included) replaced by a SyncBatchNorm sharing its parameters
        and buffers."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats,
                      process_group)
            if module.affine:
                out.weight, out.bias = module.weight, module.bias
            out.running_mean, out.running_var = module.running_mean, module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


class _InstanceNorm(_NormBase):
    _nd = 0

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False,
                 device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input):
        if input.dim() not in (self._nd + 1, self._nd + 2):
            raise ValueError(f"expected {self._nd + 1}D or {self._nd + 2}D input (got {input.dim()}D input)")
        batched = input.dim() == self._nd + 2
        dim = 1 if batched else 0
        if input.shape[dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={dim} to match num_features ({self.num_features}), "
                                 f"but got: {input.shape[dim]}.")
            warnings.warn(f"input's size at dim={dim} does not match num_features. You can silence this warning by "
                          f"not passing in num_features, which is not used because affine=False")
        if not batched:
            input = input.unsqueeze(0)
        out = F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats, self.momentum if self.momentum
                              is not None else 0.0, self.eps)
        return out if batched else out.squeeze(0)


class InstanceNorm1d(_InstanceNorm):
    _nd = 1


class InstanceNorm2d(_InstanceNorm):
    _nd = 2


class InstanceNorm3d(_InstanceNorm):
    _nd = 3


def _shape_tuple(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (normalized_shape,)
    return tuple(normalized_shape)


class LayerNorm(Module):
    """Normalises over the last ``len(normalized_shape)`` dims; ``weight`` ones, ``bias`` zeros."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_params(self, self.normalized_shape, elementwise_affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self, self.elementwise_affine)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return '{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, bias={use_bias}'.format(
            **self.__dict__, use_bias=self.bias is not None)


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_params(self, num_channels, affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self, self.affine)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return '{num_groups}, {num_channels}, eps={eps}, affine={affine}, bias={use_bias}'.format(
            **self.__dict__, use_bias=self.bias is not None)


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_E.empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter('weight', None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return '{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}'.format(**self.__dict__)


class LocalResponseNorm(Module):
    """Normalises each channel by the activity of its ``size`` neighbouring channels."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return '{size}, alpha={alpha}, beta={beta}, k={k}'.format(**self.__dict__)


class CrossMapLRN2d(Module):
    """Lua torch's cross-channel LRN on 4-D input, with its own backward formula (modules/_functions.py).

    >>> import ember
    >>> ember.nn.CrossMapLRN2d(3)(ember.ones(1, 4, 2, 2)).shape
    ember.Size([1, 4, 2, 2])
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return _cross_map_lrn2d.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return '{size}, alpha={alpha}, beta={beta}, k={k}'.format(**self.__dict__)


# --- lazy batch and instance norms (NOTE [lazy parameters]) ---------------------------------------------------

class _LazyNormBase(LazyModuleMixin, _NormBase):
    """num_features from the first input's dimension 1; the running statistics are uninitialized buffers until
    then (``num_batches_tracked`` is an ordinary 0)."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
                 bias=True):
        super().__init__(0, eps, momentum, False, False, device=device, dtype=dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = _E.zeros((), dtype=int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm_class(base):
    cls = type(f'Lazy{base.__name__}', (_LazyNormBase, base), {'cls_to_become': base, '__doc__': (
        f"A {base.__name__} whose ``num_features`` is read from its first input's dimension 1; it becomes a "
        f"{base.__name__} then (NOTE [lazy parameters]).")})
    cls.__module__ = __name__
    return cls


LazyBatchNorm1d = _lazy_norm_class(BatchNorm1d)
LazyBatchNorm2d = _lazy_norm_class(BatchNorm2d)
LazyBatchNorm3d = _lazy_norm_class(BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm_class(InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm_class(InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm_class(InstanceNorm3d)


# NOTE [torch's module paths]: a saved model pickles its classes by module and name, and ember writes torch's
# names (serialization._torch_name); these classes live here but in torch's batchnorm.py and instancenorm.py, so
# they name those modules (which re-export them), and torch finds them when it loads ember's file
for _cls in (BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm, LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d):
    _cls.__module__ = 'ember.nn.modules.batchnorm'
for _cls in (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LazyInstanceNorm1d, LazyInstanceNorm2d,
             LazyInstanceNorm3d):
    _cls.__module__ = 'ember.nn.modules.instancenorm'
