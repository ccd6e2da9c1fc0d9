"""Quantized linear layers: the quantized weight and float bias kept as torch's packed parameters, so that the
state dict has torch's keys (``_packed_params._packed_params``: a (weight, bias) tuple, ``_packed_params.dtype``,
``scale``, ``zero_point``)."""
import ember
from ember import nn
from ._utils import (_quantize_weight, _weight_observer, _activation_qparams, _hide_children_repr,
                     _OutputQParams, _observed_float_module)

qops = ember.ops.quantized


class LinearPackedParams(nn.Module):
    """The weight and bias of a quantized linear layer (torch packs them for fbgemm; ember keeps them as they are).
    """
    _version = 3

    def __init__(self, dtype=ember.qint8):
        super().__init__()
        self.dtype = dtype
        self.set_weight_bias(ember._make_per_tensor_quantized_tensor(ember.zeros(1, 1, dtype=ember.int8), 1.0, 0),
                             None)

    def set_weight_bias(self, weight, bias):
        self._weight, self._bias = weight, bias

    def _weight_bias(self):
        return self._weight, self._bias

    @property
    def _packed_params(self):
        return self._weight, self._bias

    def forward(self, x):
        return x

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + 'dtype'] = self.dtype
        destination[prefix + '_packed_params'] = self._weight_bias()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        self.dtype = state_dict.pop(prefix + 'dtype', self.dtype)
        w, b = state_dict.pop(prefix + '_packed_params')
        self.set_weight_bias(w, b)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    def __repr__(self):
        return self._weight_bias().__repr__()


class Linear(_OutputQParams, nn.Module):
    """A linear layer over quint8 activations and a qint8 weight: int32 accumulation, requantized to ``scale`` and
    ``zero_point``.

    >>> m = Linear(4, 2)
    >>> x = ember.quantize_per_tensor(ember.ones(1, 4), 0.1, 0, ember.quint8)
    >>> m(x).dtype
    ember.quint8
    """
    _version = 3
    _FLOAT_MODULE = (nn.Linear,)

    def __init__(self, in_features, out_features, bias_=True, dtype=ember.qint8):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bias = ember.zeros(out_features, dtype=ember.float32) if bias_ else None
        qweight = ember._make_per_tensor_quantized_tensor(ember.zeros(out_features, in_features, dtype=ember.int8),
                                                          1.0, 0)
        self._packed_params = LinearPackedParams(dtype)
        self._packed_params.set_weight_bias(qweight, bias)
        self.scale, self.zero_point = 1.0, 0

    def _get_name(self):
        return 'QuantizedLinear'

    def __repr__(self):
        return _hide_children_repr(self, LinearPackedParams)

    def extra_repr(self):
        return (f'in_features={self.in_features}, out_features={self.out_features}, scale={self.scale}, '
                f'zero_point={self.zero_point}, qscheme={self.weight().qscheme()}')

    def forward(self, x):
        w, b = self._weight_bias()
        return qops._linear_unpacked(x, w, b, float(self.scale), int(self.zero_point))

    def _weight_bias(self):
        return self._packed_params._weight_bias()

    def weight(self):
        return self._weight_bias()[0]

    def bias(self):
        return self._weight_bias()[1]

    def set_weight_bias(self, w, b):
        self._packed_params.set_weight_bias(w, b)


    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The quantized layer of an observed float (or QAT) layer: the weight quantized with the weight
        observer's parameters, the output with the activation observer's."""
        act_scale, act_zp = _activation_qparams(mod)
        mod, wpp = _observed_float_module(cls, mod, nn.utils.fusion.fuse_linear_bn_weights)
        obs = _weight_observer(mod, wpp)
        if obs.dtype != ember.qint8:
            raise AssertionError("Weight observer must have dtype torch.qint8")
        qlinear = cls(mod.in_features, mod.out_features, dtype=obs.dtype)
        qlinear.set_weight_bias(_quantize_weight(mod.weight.float(), obs), None if mod.bias is None else
                                mod.bias.detach().float())
        qlinear.scale, qlinear.zero_point = act_scale, act_zp
        return qlinear

    @classmethod
    def from_reference(cls, ref_qlinear, output_scale, output_zero_point):
        raise NotImplementedError("reference quantized modules are not part of ember")
