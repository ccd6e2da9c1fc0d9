"""Eager-mode quantization: ``prepare`` (qconfigs and output observers), ``convert`` (swap observed modules for
quantized ones), ``quantize``, ``quantize_dynamic``, ``prepare_qat``, ``quantize_qat``, as torch.ao.quantization's."""
import copy
import inspect
import itertools
import warnings

import ember
from ember import nn
from ember.ao.nn.intrinsic import _FusedModule
from ember.ao.nn import quantized as nnq
from .quantization_mappings import (get_default_static_quant_module_mappings, get_default_qat_module_mappings,
                                    get_default_dynamic_quant_module_mappings, get_default_qconfig_propagation_list)
from .qconfig import default_dynamic_qconfig, float_qparams_weight_only_qconfig
from .stubs import DeQuantStub
from .observer import ObserverBase
from .fake_quantize import FakeQuantizeBase

__all__ = ['propagate_qconfig_', 'add_quant_dequant', 'prepare', 'prepare_qat', 'convert', 'quantize',
           'quantize_dynamic', 'quantize_qat', 'swap_module']

# torch 2.13 marks its eager-mode entry points deprecated (PEP 702's @deprecated: the message as __deprecated__, a
# DeprecationWarning at each call, shown for calls from __main__)
_DEPRECATED = ("torch.ao.quantization is deprecated and will be removed in 2.10. \nFor migrations of users: \n"
               "1. Eager mode quantization (torch.ao.quantization.quantize, torch.ao.quantization.quantize_dynamic), "
               "please migrate to use torchao eager mode quantize_ API instead \n2. FX graph mode quantization "
               "(torch.ao.quantization.quantize_fx.prepare_fx,torch.ao.quantization.quantize_fx.convert_fx, please "
               "migrate to use torchao pt2e quantization API instead (prepare_pt2e, convert_pt2e) \n3. pt2e "
               "quantization has been migrated to torchao (https://github.com/pytorch/ao/tree/main/torchao/"
               "quantization/pt2e) \nsee https://github.com/pytorch/ao/issues/2259 for more details")


def _deprecated(fn):
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        warnings.warn(_DEPRECATED, DeprecationWarning, stacklevel=2)
        return fn(*args, **kwargs)
    wrapper.__deprecated__ = _DEPRECATED
    return wrapper


def propagate_qconfig_(module, qconfig_dict=None, prepare_custom_config_dict=None):
    """Give every submodule a ``qconfig``: its own, else one ``qconfig_dict`` names by type or name, else its
    parent's."""
    _propagate(module, qconfig_dict or {}, None, '')


def _propagate(module, qconfig_dict, parent_qconfig, prefix):
    qconfig = qconfig_dict.get(type(module), parent_qconfig)
    qconfig = qconfig_dict.get(prefix, qconfig)
    module.qconfig = getattr(module, 'qconfig', qconfig)
    for name, child in module.named_children():
        _propagate(child, qconfig_dict, module.qconfig, prefix + '.' + name if prefix else name)


def _observer_forward_hook(self, input, output):
    return self.activation_post_process(output)


def _needs_observation(m):
    return getattr(m, 'qconfig', None) is not None


def _insert_observer(m):
    if _needs_observation(m) and not isinstance(m, DeQuantStub):
        m.add_module('activation_post_process', m.qconfig.activation())
        m.register_forward_hook(_observer_forward_hook)


def _add_observer_(module, propagation_list, non_leaf_module_list=None):
    for child in module.children():
        if type(child) is nn.Dropout:
            continue
        if isinstance(child, (nnq.FloatFunctional, nnq.QFunctional)):
            if _needs_observation(child):
                child.activation_post_process = child.qconfig.activation()
        elif isinstance(child, _FusedModule) or (non_leaf_module_list and type(child) in non_leaf_module_list):
            _insert_observer(child)
        else:
            _add_observer_(child, propagation_list, non_leaf_module_list)
    if not list(module.children()) and not isinstance(module, nn.Sequential) and type(module) in propagation_list:
        _insert_observer(module)


@_deprecated
def prepare(model, inplace=False, allow_list=None, observer_non_leaf_module_list=None,
            prepare_custom_config_dict=None):
    """Attach observers to a model with qconfigs: each quantizable leaf's output is observed by its qconfig's
    activation observer (a forward hook), ready for calibration and ``convert``.

    >>> from ember.ao.quantization import QuantStub, default_qconfig
    >>> m = nn.Sequential(QuantStub(), nn.Linear(2, 2)); m.qconfig = default_qconfig
    >>> prepare(m)[1].activation_post_process
    MinMaxObserver(min_val=inf, max_val=-inf)
    """
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model)
    if not any(getattr(m, 'qconfig', None) for m in model.modules()):
        warnings.warn("None of the submodule got qconfig applied. Make sure you passed correct configuration "
                      "through `qconfig_dict` or by assigning the `.qconfig` attribute directly on submodules",
                      stacklevel=2)
    _add_observer_(model, allow_list or get_default_qconfig_propagation_list(), observer_non_leaf_module_list)
    return model


def _remove_activation_post_process(module):
    app = getattr(module, 'activation_post_process', None)
    if isinstance(app, (ObserverBase, FakeQuantizeBase)):
        delattr(module, 'activation_post_process')
    for k, hook in list(module._forward_hooks.items()):
        if hook is _observer_forward_hook:
            del module._forward_hooks[k]


def _remove_qconfig(module):
    for child in module.children():
        _remove_qconfig(child)
    if hasattr(module, 'qconfig'):
        del module.qconfig
    _remove_activation_post_process(module)


def swap_module(mod, mapping, custom_module_class_mapping=None, use_precomputed_fake_quant=False):
    """The module ``mapping`` gives for ``mod``'s type, built by ``from_float``, with ``mod``'s other hooks."""
    if getattr(mod, 'qconfig', None) is None or type(mod) not in mapping:
        return mod
    qmod = mapping[type(mod)]
    if 'use_precomputed_fake_quant' in inspect.signature(qmod.from_float).parameters:
        new = qmod.from_float(mod, use_precomputed_fake_quant=use_precomputed_fake_quant)
    else:
        new = qmod.from_float(mod)
    for hook in mod._forward_pre_hooks.values():
        new.register_forward_pre_hook(hook)
    for hook in mod._forward_hooks.values():
        if hook is not _observer_forward_hook:
            new.register_forward_hook(hook)
    return new


def _convert(module, mapping, use_precomputed_fake_quant=False):
    swapped = {}
    for name, mod in module.named_children():
        if not isinstance(mod, _FusedModule):
            _convert(mod, mapping, use_precomputed_fake_quant)
        swapped[name] = swap_module(mod, mapping, None, use_precomputed_fake_quant)
    for name, mod in swapped.items():
        setattr(module, name, mod)
    return module


@_deprecated
def convert(module, mapping=None, inplace=False, remove_qconfig=True, is_reference=False,
            convert_custom_config_dict=None, use_precomputed_fake_quant=False):
    """Swap every observed module with a qconfig for its quantized counterpart (``mapping``: the static one by
    default), then drop qconfigs and leftover observers."""
    if is_reference:
        raise NotImplementedError("reference quantized modules are not part of ember")
    if not inplace:
        module = copy.deepcopy(module)
    _convert(module, mapping if mapping is not None else get_default_static_quant_module_mappings(),
             use_precomputed_fake_quant)
    if remove_qconfig:
        _remove_qconfig(module)
    return module


@_deprecated
def quantize(model, run_fn, run_args, mapping=None, inplace=False):
    """Post-training static quantization: prepare, ``run_fn(model, *run_args)`` to calibrate, convert."""
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    prepare(model, inplace=True)
    run_fn(model, *run_args)
    convert(model, mapping, inplace=True)
    return model


@_deprecated
def quantize_dynamic(model, qconfig_spec=None, dtype=ember.qint8, mapping=None, inplace=False):
    """Replace Linear, LSTM, GRU and RNN cell layers (``qconfig_spec``: a set of types, or a dict of type or name
    to qconfig) by dynamically quantized ones: qint8 weights, activations quantized per call; with
    ``dtype=quint8``, embeddings by weight-only quantized ones.

    >>> q = quantize_dynamic(nn.Sequential(nn.Linear(4, 2)), {nn.Linear}, dtype=ember.qint8)
    >>> q
    Sequential(
      (0): DynamicQuantizedLinear(in_features=4, out_features=2, dtype=ember.qint8, qscheme=ember.per_tensor_affine)
    )
    """
    if qconfig_spec is None:
        if dtype == ember.qint8:
            qconfig_spec = dict.fromkeys((nn.Linear, nn.LSTM, nn.GRU, nn.LSTMCell, nn.RNNCell, nn.GRUCell),
                                         default_dynamic_qconfig)
        elif dtype == ember.quint8:
            qconfig_spec = dict.fromkeys((nn.EmbeddingBag, nn.Embedding), float_qparams_weight_only_qconfig)
        else:
            raise ValueError(f"Don't know how to quantize with default settings for {dtype}. Provide full "
                             "qconfig please")
    elif isinstance(qconfig_spec, set):
        if dtype == ember.qint8:
            qc = default_dynamic_qconfig
        elif dtype == ember.quint8:
            qc = float_qparams_weight_only_qconfig
        else:
            raise RuntimeError(f"Unknown dtype specified for quantize_dynamic: {dtype}")
        qconfig_spec = dict(zip(qconfig_spec, itertools.repeat(qc)))
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    propagate_qconfig_(model, qconfig_spec)
    convert(model, mapping if mapping is not None else get_default_dynamic_quant_module_mappings(), inplace=True)
    return model


@_deprecated
def prepare_qat(model, mapping=None, inplace=False):
    """Quantization-aware training: swap layers for their QAT versions (weights fake-quantized) and attach the
    fake quantizers of the activations. The model must be in training mode."""
    if not model.training:
        raise AssertionError("prepare_qat only works on models in training mode")
    mapping = mapping if mapping is not None else get_default_qat_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model)
    convert(model, mapping=mapping, inplace=True, remove_qconfig=False)
    prepare(model, observer_non_leaf_module_list=set(mapping.values()), inplace=True)
    return model


@_deprecated
def quantize_qat(model, run_fn, run_args, inplace=False):
    """prepare_qat, ``run_fn(model, *run_args)`` to train, convert."""
    if not inplace:
        model = copy.deepcopy(model)
    model.train()
    prepare_qat(model, inplace=True)
    run_fn(model, *run_args)
    convert(model, inplace=True)
    return model


def add_quant_dequant(module):
    """Wrap every leaf with a qconfig in a QuantWrapper."""
    from .stubs import QuantWrapper
    if not list(module.children()) and getattr(module, 'qconfig', None):
        return QuantWrapper(module)
    for name, child in module.named_children():
        setattr(module, name, add_quant_dequant(child))
    return module
