"""Module fusion: conv-bn(-relu), conv-relu, linear-relu, linear-bn become one module (``fuse_modules``: batch
norm folded into the weights, for post-training quantization; ``fuse_modules_qat``: the fused training modules of
ember.ao.nn.intrinsic). The first listed module is replaced by the fused one, the others by Identity."""
import copy

from ember import nn
from ember.nn.utils import fusion
from ember.ao.nn import intrinsic as nni

__all__ = ['fuse_modules', 'fuse_modules_qat', 'fuse_known_modules', 'get_fuser_method', 'fuse_conv_bn',
           'fuse_conv_bn_relu', 'fuse_linear_bn']


def fuse_conv_bn(is_qat, conv, bn):
    """Conv2d and BatchNorm2d as one module: the fused training module (``is_qat``) or, in eval mode, a Conv2d
    with the batch norm folded into its weight and bias.

    >>> conv, bn = nn.Conv2d(2, 3, 1).eval(), nn.BatchNorm2d(3).eval()
    >>> type(fuse_conv_bn(False, conv, bn)).__name__
    'Conv2d'
    """
    if conv.training != bn.training:
        raise AssertionError("Conv and BN both must be in the same mode (train or eval).")
    if is_qat:
        return nni.ConvBn2d(conv, bn)
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    return fusion.fuse_conv_bn_eval(conv, bn)


def fuse_conv_bn_relu(is_qat, conv, bn, relu):
    """Conv2d, BatchNorm2d and ReLU as one module (ConvBnReLU2d for QAT, else ConvReLU2d over the folded conv)."""
    if conv.training != bn.training or bn.training != relu.training:
        raise AssertionError("Conv and BN both must be in the same mode (train or eval).")
    if is_qat:
        return nni.ConvBnReLU2d(conv, bn, relu)
    return nni.ConvReLU2d(fuse_conv_bn(False, conv, bn), relu)


def fuse_linear_bn(is_qat, linear, bn):
    """Linear and BatchNorm1d as one module (LinearBn1d for QAT, else the folded Linear)."""
    if linear.training != bn.training:
        raise AssertionError("Linear and BN both must be in the same mode (train or eval).")
    if is_qat:
        return nni.LinearBn1d(linear, bn)
    return fusion.fuse_linear_bn_eval(linear, bn)


_FUSERS = {
    (nn.Conv2d, nn.BatchNorm2d): fuse_conv_bn,
    (nn.Conv2d, nn.BatchNorm2d, nn.ReLU): fuse_conv_bn_relu,
    (nn.Conv2d, nn.ReLU): lambda is_qat, conv, relu: nni.ConvReLU2d(conv, relu),
    (nn.Linear, nn.ReLU): lambda is_qat, linear, relu: nni.LinearReLU(linear, relu),
    (nn.Linear, nn.BatchNorm1d): fuse_linear_bn,
    (nn.BatchNorm2d, nn.ReLU): lambda is_qat, bn, relu: nni.BNReLU2d(bn, relu),
}


def get_fuser_method(op_list, additional_fuser_method_mapping=None):
    """The function fusing modules of the types ``op_list``."""
    fn = {**_FUSERS, **(additional_fuser_method_mapping or {})}.get(tuple(op_list))
    if fn is None:
        raise AssertionError(f"did not find fuser method for: {op_list} ")
    return fn


def fuse_known_modules(mod_list, is_qat, additional_fuser_method_mapping=None):
    """The fused module in the first position and Identity in the others, with forward hooks moved over."""
    fused = get_fuser_method(tuple(type(m) for m in mod_list), additional_fuser_method_mapping)(is_qat, *mod_list)
    new = [None] * len(mod_list)
    for hook in mod_list[0]._forward_pre_hooks.values():
        fused.register_forward_pre_hook(hook)
    for hook in mod_list[-1]._forward_hooks.values():
        fused.register_forward_hook(hook)
    new[0] = fused
    for i in range(1, len(mod_list)):
        ident = nn.Identity()
        ident.training = mod_list[0].training
        new[i] = ident
    return new


def _get_module(model, name):
    for part in name.split('.'):
        model = getattr(model, part)
    return model


def _set_module(model, name, new):
    *parents, last = name.split('.')
    for part in parents:
        model = getattr(model, part)
    setattr(model, last, new)


def _fuse(model, modules_to_fuse, is_qat, inplace, fuser_func, fuse_custom_config_dict):
    if not inplace:
        model = copy.deepcopy(model)
    groups = modules_to_fuse if modules_to_fuse and isinstance(modules_to_fuse[0], (list, tuple)) \
        else [modules_to_fuse]
    extra = (fuse_custom_config_dict or {}).get('additional_fuser_method_mapping', {})
    for names in groups:
        new = fuser_func([_get_module(model, n) for n in names], is_qat, extra)
        for name, mod in zip(names, new):
            _set_module(model, name, mod)
    return model


def fuse_modules(model, modules_to_fuse, inplace=False, fuser_func=fuse_known_modules, fuse_custom_config_dict=None):
    """Fuse the named modules of an eval-mode model (batch norm folded into the weights).

    >>> m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU()).eval()
    >>> fuse_modules(m, ['0', '1'])
    Sequential(
      (0): ConvReLU2d(
        (0): Conv2d(1, 2, kernel_size=(3, 3), stride=(1, 1))
        (1): ReLU()
      )
      (1): Identity()
    )
    """
    return _fuse(model, modules_to_fuse, False, inplace, fuser_func, fuse_custom_config_dict)


def fuse_modules_qat(model, modules_to_fuse, inplace=False, fuser_func=fuse_known_modules,
                     fuse_custom_config_dict=None):
    """Fuse for quantization-aware training: conv-bn stays trainable (ConvBn2d, ConvBnReLU2d)."""
    return _fuse(model, modules_to_fuse, True, inplace, fuser_func, fuse_custom_config_dict)
