"""torch.nn.utils.weight_norm / spectral_norm, the older forward-pre-hook forms that many published models
still use (HiFi-GAN's ``weight_norm`` and ``remove_weight_norm``, GAN discriminators' ``spectral_norm``).

- ``weight_norm(module, name='weight', dim=0)``: parameters ``<name>_g`` (the norm over every dimension but
  ``dim``) and ``<name>_v`` replace ``<name>``, which a forward pre-hook recomputes as ``g * v / ||v||`` before
  each call; torch warns that it is deprecated in favour of ``parametrizations.weight_norm``, and so does ember.
- ``spectral_norm(module, name='weight', n_power_iterations=1, eps=1e-12, dim=None)``: parameter
  ``<name>_orig`` and buffers ``<name>_u``, ``<name>_v``; before each call in training mode, power iteration
  (v, then u, updated in place) and ``<name> = <name>_orig / sigma``, sigma = u . W v.
- ``remove_weight_norm`` / ``remove_spectral_norm`` put a plain parameter back, holding the current value.

The keys of ``state_dict`` are torch's, so checkpoints of such models load both ways.
"""
from ember._warn import warnings

from ... import Tensor, _weight_norm, dot, mv, no_grad, norm_except_dim
from .. import functional as F
from ..parameter import Parameter

__all__ = ['weight_norm', 'remove_weight_norm', 'spectral_norm', 'remove_spectral_norm']


class WeightNorm:
    """The forward pre-hook of ``weight_norm``."""

    def __init__(self, name, dim):
        self.name, self.dim = name, -1 if dim is None else dim

    def compute_weight(self, module):
        return _weight_norm(getattr(module, self.name + '_v'), getattr(module, self.name + '_g'), self.dim)

    @staticmethod
    def apply(module, name, dim):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + '_g', Parameter(norm_except_dim(weight, 2, fn.dim).detach()))
        module.register_parameter(name + '_v', Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + '_g']
        del module._parameters[self.name + '_v']
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name='weight', dim=0):
    """Weight normalisation by a forward pre-hook (deprecated in torch for
    ``torch.nn.utils.parametrizations.weight_norm``); returns the module."""
    warnings.warn_in_library("`torch.nn.utils.weight_norm` is deprecated in favor of "
                             "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning)     # torch's own line
    WeightNorm.apply(module, name, dim)
    return module


def _remove_hook(module, name, kind, cls):
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, cls) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"{kind} of '{name}' not found in {module}")


def remove_weight_norm(module, name='weight'):
    return _remove_hook(module, name, 'weight_norm', WeightNorm)


def _matrix_dim_first(weight, dim):
    """The weight as the matrix spectral normalisation works on: dimension ``dim`` as the rows."""
    if dim != 0:
        weight = weight.permute(dim, *(d for d in range(weight.dim()) if d != dim))
    return weight.reshape(weight.shape[0], -1)


def _spectral_dim(module, dim):
    """torch's default: the output channels, dimension 1 of a transposed convolution's weight, else 0."""
    if dim is not None:
        return dim
    from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
    return 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0


class SpectralNorm:
    """The forward pre-hook of ``spectral_norm``."""

    def __init__(self, name='weight', n_power_iterations=1, dim=0, eps=1e-12):
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def reshape_weight_to_matrix(self, weight):
        return _matrix_dim_first(weight, self.dim)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + '_orig')
        u, v = getattr(module, self.name + '_u'), getattr(module, self.name + '_v')
        w = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(mv(w.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(mv(w, v), dim=0, eps=self.eps))
            u, v = u.clone(), v.clone()         # the buffers change in place at the next call
        return weight / dot(u, mv(w, v))

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + '_u')
        delattr(module, self.name + '_v')
        delattr(module, self.name + '_orig')
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        with no_grad():
            h, k = fn.reshape_weight_to_matrix(weight).shape
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=eps)
            v = F.normalize(weight.new_empty(k).normal_(0, 1), dim=0, eps=eps)
        delattr(module, name)
        module.register_parameter(name + '_orig', weight)
        setattr(module, name, weight.detach())
        module.register_buffer(name + '_u', u)
        module.register_buffer(name + '_v', v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module, name='weight', n_power_iterations=1, eps=1e-12, dim=None):
    """Spectral normalisation by a forward pre-hook; returns the module."""
    SpectralNorm.apply(module, name, n_power_iterations, _spectral_dim(module, dim), eps)
    return module


def remove_spectral_norm(module, name='weight'):
    return _remove_hook(module, name, 'spectral_norm', SpectralNorm)
