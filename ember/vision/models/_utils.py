"""Helpers the model files share (torchvision's ``models/_utils.py``)."""
import ember.nn as nn


def _make_divisible(v, divisor, min_value=None):
    """Round channels to a multiple of ``divisor``, never more than 10% below ``v``."""
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def _init_mobile(model, init_linear_weight):
    """The weight initialisation of torchvision's MobileNetV2/V3 and EfficientNet, in module order: convolutions
    Kaiming-normal (fan_out), norms ones and zeros, linear layers' weights by ``init_linear_weight`` (the models
    differ only there) and zero biases."""
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode='fan_out')
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear):
            init_linear_weight(m.weight)
            nn.init.zeros_(m.bias)
