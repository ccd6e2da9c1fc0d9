"""Helpers of the quantized modules: weight quantization from an observer, torch's module names."""
import ember
from ember import nn

_PER_TENSOR = (ember.per_tensor_symmetric, ember.per_tensor_affine)
_PER_CHANNEL = (ember.per_channel_symmetric, ember.per_channel_affine)


def _quantize_weight(float_wt, observer):
    """``float_wt`` quantized with the parameters ``observer`` computed (torch's _quantize_weight)."""
    scale, zp = observer.calculate_qparams()
    if observer.qscheme in _PER_TENSOR:
        return ember.quantize_per_tensor(float_wt, float(scale), int(zp), ember.qint8)
    if observer.qscheme in _PER_CHANNEL:
        return ember.quantize_per_channel(float_wt, scale.to(ember.float64), zp.to(ember.int64), observer.ch_axis,
                                          ember.qint8)
    if observer.qscheme == ember.per_channel_affine_float_qparams:
        return ember.quantize_per_channel(float_wt, scale.to(ember.float32), zp.to(ember.float32),
                                          observer.ch_axis, observer.dtype)
    raise ValueError(f"Unexpected qscheme {observer.qscheme}")


def _activation_qparams(mod):
    scale, zp = mod.activation_post_process.calculate_qparams()
    return float(scale), int(zp)


def _weight_observer(mod, weight_post_process=None):
    """The weight's observer, having seen the weight (the qconfig's or, after QAT, the module's fake quantizer)."""
    obs = weight_post_process if weight_post_process is not None else mod.qconfig.weight()
    obs(mod.weight)
    return obs


def _hide_children_repr(self, hidden):
    """torch's repr of a quantized layer: its extra_repr and children, without the packed parameters."""
    extra = self.extra_repr().split('\n') if self.extra_repr() else []
    children = []
    for key, module in self._modules.items():
        if isinstance(module, hidden):
            continue
        text = repr(module).replace('\n', '\n  ')
        children.append(f'({key}): {text}')
    lines = extra + children
    body = ''
    if lines:
        body = extra[0] if len(extra) == 1 and not children else '\n  ' + '\n  '.join(lines) + '\n'
    return f'{self._get_name()}({body})'


class _OutputQParams:
    """A quantized module's output ``scale`` and ``zero_point`` in its state dict, as torch keeps them (0-d
    tensors after the module's own entries), and read back from it. Mixed in before ``nn.Module``."""

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + 'scale'] = ember.tensor(self.scale)
        destination[prefix + 'zero_point'] = ember.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        self.scale = float(state_dict.pop(prefix + 'scale'))
        self.zero_point = int(state_dict.pop(prefix + 'zero_point'))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)


def _observed_float_module(cls, mod, fold_bn):
    """``(float module, weight post-process)`` for ``cls.from_float(mod)``: after QAT the module itself with its
    fake quantizer (a batch norm it carries folded in by ``fold_bn``, as torch's convert does); otherwise the
    float layer of a plain or fused (``LinearReLU``, ``ConvReLU2d``) module, whose qconfig gives the observer."""
    if hasattr(mod, 'weight_fake_quant'):
        if hasattr(mod, 'bn'):
            mod.weight, mod.bias = fold_bn(mod.weight, mod.bias, mod.bn.running_mean, mod.bn.running_var, mod.bn.eps,
                                           mod.bn.weight, mod.bn.bias)
        return mod, mod.weight_fake_quant
    names = [c.__name__ for c in cls._FLOAT_MODULE]
    if type(mod).__name__ not in names:
        raise AssertionError(f"nnq.{cls.__name__}.from_float only works for {names}, but got: {type(mod)}")
    if not hasattr(mod, 'qconfig'):
        raise AssertionError("Input float module must have qconfig defined")
    return (mod[0] if isinstance(mod, nn.Sequential) else mod), None
