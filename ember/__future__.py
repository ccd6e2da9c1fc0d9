"""torch.__future__: process-wide switches for behaviour that will become nn.Module's default.

They are flags only; ``nn.Module``'s conversions (``to``, ``float``, ``load_state_dict``) are what read them.
ember's ``nn.Module._apply`` does not consult them yet: it always sets ``param.data`` (torch's default).

>>> import ember
>>> ember.__future__.get_swap_module_params_on_conversion()
False
"""
_overwrite_module_params_on_conversion = False
_swap_module_params_on_conversion = False

__all__ = ['set_overwrite_module_params_on_conversion', 'get_overwrite_module_params_on_conversion',
           'set_swap_module_params_on_conversion', 'get_swap_module_params_on_conversion']


def set_overwrite_module_params_on_conversion(value):
    """Whether converting an nn.Module (``module.to``, ``.float()``, ``.to_empty``) assigns new Parameters instead
    of changing the existing ones' data in place."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion():
    """See set_overwrite_module_params_on_conversion; False by default."""
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value):
    """Whether converting an nn.Module (and ``load_state_dict``) swaps each Parameter with its converted value by
    ``ember.utils.swap_tensors`` instead of setting ``.data``; it takes precedence over the overwrite switch."""
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion():
    """See set_swap_module_params_on_conversion; False by default."""
    return _swap_module_params_on_conversion
