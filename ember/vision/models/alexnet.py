"""AlexNet (the one-GPU variant torchvision ships): ``features.{0,3,6,8,10}``, ``classifier.{1,4,6}``."""
import ember
import ember.nn as nn

from ._api import _check_num_classes, _load, _resolve, _weights, register_model

AlexNet_Weights = _weights('AlexNet_Weights', {'IMAGENET1K_V1': 'alexnet-owt-7be5be79.pth'})


class AlexNet(nn.Module):
    def __init__(self, num_classes=1000, dropout=0.5):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=11, stride=4, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(64, 192, kernel_size=5, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(192, 384, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(kernel_size=3, stride=2))
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout), nn.Linear(256 * 6 * 6, 4096), nn.ReLU(inplace=True),
            nn.Dropout(p=dropout), nn.Linear(4096, 4096), nn.ReLU(inplace=True), nn.Linear(4096, num_classes))

    def forward(self, x):
        return self.classifier(ember.flatten(self.avgpool(self.features(x)), 1))


@register_model(AlexNet_Weights)
def alexnet(*, weights=None, progress=True, **kwargs):
    """AlexNet; inputs of at least 63×63."""
    weights = _resolve(AlexNet_Weights, weights, kwargs)
    _check_num_classes(weights, kwargs)
    return _load(AlexNet(**kwargs), weights)
