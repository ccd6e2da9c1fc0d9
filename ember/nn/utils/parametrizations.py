"""torch.nn.utils.parametrizations: ready-made parametrizations on ``ember.nn.utils.parametrize``.

``weight_norm(module, name='weight', dim=0)`` writes the weight as ``g * v / ||v||`` (the norm over every
dimension but ``dim``; the whole tensor for ``dim=None``): ``parametrizations.weight.original0`` is g,
``original1`` is v, torch's names, and a state dict of the older ``torch.nn.utils.weight_norm`` (``weight_g``,
``weight_v``) loads into it as in torch.

>>> import ember
>>> from ember.nn.utils.parametrizations import weight_norm
>>> m = weight_norm(ember.nn.Linear(4, 3))
>>> [n for n, _ in m.named_parameters()]
['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
"""
from ... import _weight_norm, norm_except_dim
from ..modules.module import Module
from . import parametrize

__all__ = ['weight_norm']


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
