"""torch.nn.utils.parametrizations: ready-made parametrizations on ``ember.nn.utils.parametrize``.

``weight_norm(module, name='weight', dim=0)`` writes the weight as ``g * v / ||v||`` (the norm over every
dimension but ``dim``; the whole tensor for ``dim=None``): ``parametrizations.weight.original0`` is g,
``original1`` is v, torch's names, and a state dict of the older ``torch.nn.utils.weight_norm`` (``weight_g``,
``weight_v``) loads into it as in torch.

``spectral_norm(module, name='weight', n_power_iterations=1, eps=1e-12, dim=None)`` divides the weight by its
largest singular value, estimated by power iteration: buffers ``_u`` and ``_v`` (the singular vectors, 15
iterations at registration) take ``n_power_iterations`` more steps at each read in training mode and none in
eval mode, as torch's. The weight is seen as a matrix with ``dim`` first (1 for ConvTranspose, else 0); a
1-D weight is simply normalised.

>>> import ember
>>> from ember.nn.utils.parametrizations import weight_norm
>>> m = weight_norm(ember.nn.Linear(4, 3))
>>> [n for n, _ in m.named_parameters()]
['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
"""
from ... import Tensor, _weight_norm, mv, no_grad, norm_except_dim, vdot
from .. import functional as F
from ..modules.module import Module
from . import parametrize
from .weight_norm import _matrix_dim_first, _spectral_dim

__all__ = ['weight_norm', 'spectral_norm']


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name='weight', dim=0):
    """Weight normalisation of ``module.<name>`` (Salimans & Kingma, 2016); returns the module."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs):
        g_key, v_key = f'{prefix}{name}_g', f'{prefix}{name}_v'
        if g_key in state_dict and v_key in state_dict:
            state_dict[f'{prefix}parametrizations.{name}.original0'] = state_dict.pop(g_key)
            state_dict[f'{prefix}parametrizations.{name}.original1'] = state_dict.pop(v_key)
    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        nd = weight.ndim
        if not -nd <= dim < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{nd}, {nd - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim % nd
        self.eps = eps
        if nd > 1:
            self.n_power_iterations = n_power_iterations
            w = self._as_matrix(weight)
            h, k = w.shape
            self.register_buffer('_u', F.normalize(w.new_empty(h).normal_(0, 1), dim=0, eps=eps))
            self.register_buffer('_v', F.normalize(w.new_empty(k).normal_(0, 1), dim=0, eps=eps))
            self._power_method(w, 15)

    def _as_matrix(self, weight):
        return _matrix_dim_first(weight, self.dim)

    def _power_method(self, w, steps):
        """u and v towards the first left and right singular vectors of w (in place: the buffers keep their
        identity)."""
        with no_grad():
            for _ in range(steps):
                self._u.copy_(F.normalize(mv(w, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(mv(w.H, self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        w = self._as_matrix(weight)
        if self.training:
            self._power_method(w, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()     # the buffers change in place at the next read
        return weight / vdot(u, mv(w, v))

    def right_inverse(self, value):
        return value


def spectral_norm(module, name='weight', n_power_iterations=1, eps=1e-12, dim=None):
    """Spectral normalisation of ``module.<name>`` (Miyato et al., 2018); returns the module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations,
                                                                     _spectral_dim(module, dim), eps))
    return module
