"""``torchvision.models`` on ember: the classification models programs build, with torchvision's
module structure and state_dict names, so torchvision checkpoints load with ``load_state_dict``."""
from ._api import Weights
from .resnet import (ResNet, BasicBlock, Bottleneck, resnet18, resnet34, resnet50, ResNet18_Weights,
                     ResNet34_Weights, ResNet50_Weights)
from .vgg import VGG, vgg11, vgg11_bn, vgg16, vgg16_bn, VGG11_Weights, VGG11_BN_Weights, VGG16_Weights, VGG16_BN_Weights
from .alexnet import AlexNet, alexnet, AlexNet_Weights
from .squeezenet import SqueezeNet, squeezenet1_0, SqueezeNet1_0_Weights
from .mobilenetv2 import MobileNetV2, mobilenet_v2, MobileNet_V2_Weights
from .vision_transformer import VisionTransformer, vit_b_16, ViT_B_16_Weights

_BUILDERS = {f.__name__: f for f in (resnet18, resnet34, resnet50, vgg11, vgg11_bn, vgg16, vgg16_bn, alexnet,
                                     squeezenet1_0, mobilenet_v2, vit_b_16)}


def list_models(module=None, include=None, exclude=None):
    """Names of the models ember.vision builds."""
    return sorted(_BUILDERS)


def get_model(name, **config):
    """Build a model by name: ``get_model('resnet18', num_classes=10)``."""
    try:
        return _BUILDERS[name.lower()](**config)
    except KeyError:
        raise ValueError(f"Unknown model {name}") from None
