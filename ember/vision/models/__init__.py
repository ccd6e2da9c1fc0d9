"""``torchvision.models`` on ember: the classification models programs build, with torchvision's
module structure and state_dict names, so torchvision checkpoints load with ``load_state_dict``.
Every builder registers itself (NOTE [model registry] in ``_api.py``) for ``list_models`` / ``get_model``."""
from ._api import Weights, WeightsEnum, get_model, get_model_builder, get_model_weights, get_weight, list_models
from .resnet import *
from .vgg import *
from .alexnet import AlexNet, alexnet, AlexNet_Weights
from .squeezenet import *
from .densenet import *
from .mobilenetv2 import MobileNetV2, mobilenet_v2, MobileNet_V2_Weights
from .mobilenetv3 import *
from .efficientnet import *
from .shufflenetv2 import *
from .mnasnet import *
from .googlenet import *
from .inception import *
from .regnet import *
from .convnext import *
from .vision_transformer import *
from .swin_transformer import *
from .maxvit import *
