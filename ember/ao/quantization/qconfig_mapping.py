"""QConfigMapping: which QConfig each part of a model gets, by object type, module name (exact or regex) and the
order of calls, as torch's FX graph mode quantization reads it. ember has eager mode quantization only; the
mapping is the object (built, printed, turned into a dict and back), as libraries pass it around."""
from collections import OrderedDict

import ember
from ember import nn
from ember.nn import functional as F
from .fake_quantize import default_weight_fake_quant, FixedQParamsFakeQuantize
from .observer import (default_fixed_qparams_range_0to1_observer, default_fixed_qparams_range_neg1to1_observer,
                       default_placeholder_observer, default_weight_observer)
from .qconfig import (QConfig, default_quint8_weight_qconfig, default_reuse_input_qconfig, get_default_qconfig,
                      get_default_qat_qconfig)

__all__ = ['get_default_qconfig_mapping', 'get_default_qat_qconfig_mapping', 'QConfigMapping']

_GLOBAL_DICT_KEY = ''
_OBJECT_TYPE_DICT_KEY = 'object_type'
_MODULE_NAME_REGEX_DICT_KEY = 'module_name_regex'
_MODULE_NAME_DICT_KEY = 'module_name'
_MODULE_NAME_OBJECT_TYPE_ORDER_DICT_KEY = 'module_name_object_type_order'
_QCONFIG_STYLE_ORDER = ['global_qconfig', 'object_type_qconfigs', 'module_name_regex_qconfigs',
                        'module_name_qconfigs', 'module_name_object_type_order_qconfigs']

_FIXED_QPARAMS_OP_TO_OBSERVER = {
    nn.Hardsigmoid: default_fixed_qparams_range_0to1_observer,
    F.hardsigmoid: default_fixed_qparams_range_0to1_observer,
    'hardsigmoid': default_fixed_qparams_range_0to1_observer,
    'hardsigmoid_': default_fixed_qparams_range_0to1_observer,
    nn.Sigmoid: default_fixed_qparams_range_0to1_observer,
    ember.sigmoid: default_fixed_qparams_range_0to1_observer,
    'sigmoid': default_fixed_qparams_range_0to1_observer,
    'sigmoid_': default_fixed_qparams_range_0to1_observer,
    nn.Softmax: default_fixed_qparams_range_0to1_observer,
    nn.Tanh: default_fixed_qparams_range_neg1to1_observer,
    ember.tanh: default_fixed_qparams_range_neg1to1_observer,
    'tanh': default_fixed_qparams_range_neg1to1_observer,
    'tanh_': default_fixed_qparams_range_neg1to1_observer,
}


class QConfigMapping:
    """Mapping from model ops to QConfigs, in increasing match priority: ``set_global``, ``set_object_type`` (a
    module type, function or method name), ``set_module_name_regex``, ``set_module_name``,
    ``set_module_name_object_type_order``. Each setter returns the mapping, so calls chain.

    >>> m = QConfigMapping().set_global(None).set_object_type(nn.Linear, None)
    >>> list(m.object_type_qconfigs)
    [<class 'ember.nn.modules.linear.Linear'>]
    """

    def __init__(self):
        self.global_qconfig = None
        self.object_type_qconfigs = OrderedDict()
        self.module_name_regex_qconfigs = OrderedDict()
        self.module_name_qconfigs = OrderedDict()
        self.module_name_object_type_order_qconfigs = OrderedDict()

    def set_global(self, global_qconfig):
        self.global_qconfig = global_qconfig
        return self

    def set_object_type(self, object_type, qconfig):
        self.object_type_qconfigs[object_type] = qconfig
        return self

    def set_module_name_regex(self, module_name_regex, qconfig):
        """Regexes match in the order they were first registered (register the more specific first)."""
        self.module_name_regex_qconfigs[module_name_regex] = qconfig
        return self

    def set_module_name(self, module_name, qconfig):
        self.module_name_qconfigs[module_name] = qconfig
        return self

    def set_module_name_object_type_order(self, module_name, object_type, index, qconfig):
        self.module_name_object_type_order_qconfigs[(module_name, object_type, index)] = qconfig
        return self

    def __repr__(self):
        output = self.__class__.__name__ + ' ('
        for style_name in _QCONFIG_STYLE_ORDER:
            output += f'\n {style_name}'
            qconfigs = getattr(self, style_name)
            if isinstance(qconfigs, OrderedDict) and len(qconfigs) > 0:
                for key, qconfig in qconfigs.items():
                    output += f'\n  {key}: {qconfig}'
            else:
                output += f'\n  {qconfigs}'
        return output + '\n)'

    def to_dict(self):
        """The mapping as torch's qconfig_dict: ``''`` the global QConfig, the other keys lists of tuples."""
        return {
            _GLOBAL_DICT_KEY: self.global_qconfig,
            _OBJECT_TYPE_DICT_KEY: list(self.object_type_qconfigs.items()),
            _MODULE_NAME_REGEX_DICT_KEY: list(self.module_name_regex_qconfigs.items()),
            _MODULE_NAME_DICT_KEY: list(self.module_name_qconfigs.items()),
            _MODULE_NAME_OBJECT_TYPE_ORDER_DICT_KEY: [(*k, v) for k, v in
                                                      self.module_name_object_type_order_qconfigs.items()],
        }

    @classmethod
    def from_dict(cls, qconfig_dict):
        conf = cls()
        if _GLOBAL_DICT_KEY in qconfig_dict:
            conf.set_global(qconfig_dict[_GLOBAL_DICT_KEY])
        for object_type, qconfig in qconfig_dict.get(_OBJECT_TYPE_DICT_KEY, []):
            conf.set_object_type(object_type, qconfig)
        for regex, qconfig in qconfig_dict.get(_MODULE_NAME_REGEX_DICT_KEY, []):
            conf.set_module_name_regex(regex, qconfig)
        for module_name, qconfig in qconfig_dict.get(_MODULE_NAME_DICT_KEY, []):
            conf.set_module_name(module_name, qconfig)
        for module_name, object_type, index, qconfig in qconfig_dict.get(_MODULE_NAME_OBJECT_TYPE_ORDER_DICT_KEY, []):
            conf.set_module_name_object_type_order(module_name, object_type, index, qconfig)
        return conf


def _get_default_qconfig_mapping(is_qat, backend, version):
    qconfig = get_default_qat_qconfig(backend, version) if is_qat else get_default_qconfig(backend, version)
    default_weight = default_weight_fake_quant if is_qat else default_weight_observer
    # fbgemm's transposed convolutions take per-tensor weights only (torch's issue 47535)
    qconfig_transpose = QConfig(activation=qconfig.activation, weight=default_weight) \
        if backend in ('fbgemm', 'x86') else qconfig
    qconfig_layernorm = QConfig(activation=qconfig.activation, weight=default_placeholder_observer)
    mapping = (QConfigMapping().set_global(qconfig)
               .set_object_type('reshape', default_reuse_input_qconfig))
    for t in (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d, F.conv_transpose1d, F.conv_transpose2d,
              F.conv_transpose3d):
        mapping.set_object_type(t, qconfig_transpose)
    mapping.set_object_type(F.layer_norm, qconfig_layernorm).set_object_type(nn.LayerNorm, qconfig_layernorm)
    mapping.set_object_type(nn.PReLU, default_quint8_weight_qconfig)
    fixed = {}      # one QConfig per fixed-parameter observer
    for op, observer in _FIXED_QPARAMS_OP_TO_OBSERVER.items():
        if observer not in fixed:
            activation = FixedQParamsFakeQuantize.with_args(observer=observer) if is_qat else observer
            fixed[observer] = QConfig(activation=activation, weight=default_weight)
        mapping.set_object_type(op, fixed[observer])
    return mapping


def get_default_qconfig_mapping(backend='x86', version=0):
    """The default QConfigMapping of post-training quantization for ``backend`` (x86, fbgemm, qnnpack, onednn).

    >>> get_default_qconfig_mapping().object_type_qconfigs['sigmoid'].activation().calculate_qparams()[1]
    tensor([0], dtype=ember.int32)
    """
    return _get_default_qconfig_mapping(False, backend, version)


def get_default_qat_qconfig_mapping(backend='x86', version=1):
    """The default QConfigMapping of quantization-aware training for ``backend``."""
    return _get_default_qconfig_mapping(True, backend, version)
