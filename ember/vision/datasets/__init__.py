"""``torchvision.datasets`` on ember: MNIST family (idx), CIFAR (pickle batches), image folders, FakeData."""
from .vision import VisionDataset
from .mnist import MNIST, FashionMNIST, KMNIST, EMNIST
from .cifar import CIFAR10, CIFAR100
from .folder import DatasetFolder, ImageFolder, IMG_EXTENSIONS, default_loader
from .fakedata import FakeData

__all__ = ['VisionDataset', 'MNIST', 'FashionMNIST', 'KMNIST', 'EMNIST', 'CIFAR10', 'CIFAR100', 'DatasetFolder',
           'ImageFolder', 'FakeData']
