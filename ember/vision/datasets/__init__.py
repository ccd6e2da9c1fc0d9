"""``torchvision.datasets`` on ember: MNIST family (idx), CIFAR (pickle batches), image folders, FakeData, and the
datasets torchvision reads from their published layouts: Omniglot, SVHN (SciPy), USPS, STL10, QMNIST, VOC
segmentation and detection, COCO (pycocotools), CelebA, Cityscapes, Flickr8k/30k, SBU, SBD (SciPy), PhotoTour,
LSUN (lmdb). HMDB51 and UCF101 need a video decoder, which ember.vision has not (video.py)."""
from .vision import VisionDataset, StandardTransform
from .mnist import MNIST, FashionMNIST, KMNIST, EMNIST, QMNIST
from .cifar import CIFAR10, CIFAR100
from .folder import DatasetFolder, ImageFolder, IMG_EXTENSIONS, default_loader
from .fakedata import FakeData
from .omniglot import Omniglot
from .svhn import SVHN
from .usps import USPS
from .stl10 import STL10
from .voc import VOCSegmentation, VOCDetection
from .coco import CocoDetection, CocoCaptions
from .celeba import CelebA
from .cityscapes import Cityscapes
from .flickr import Flickr8k, Flickr30k
from .sbu import SBU
from .sbd import SBDataset
from .phototour import PhotoTour
from .lsun import LSUN, LSUNClass
from .video import HMDB51, UCF101
from . import utils  # noqa: F401

__all__ = ['VisionDataset', 'MNIST', 'FashionMNIST', 'KMNIST', 'EMNIST', 'QMNIST', 'CIFAR10', 'CIFAR100',
           'DatasetFolder', 'ImageFolder', 'FakeData', 'Omniglot', 'SVHN', 'USPS', 'STL10', 'VOCSegmentation',
           'VOCDetection', 'CocoDetection', 'CocoCaptions', 'CelebA', 'Cityscapes', 'Flickr8k', 'Flickr30k', 'SBU',
           'SBDataset', 'PhotoTour', 'LSUN', 'LSUNClass', 'HMDB51', 'UCF101']
