"""Semantic Boundaries Dataset (SBD): VOC images with class segmentations and boundaries in MATLAB files.

Layout as torchvision: ``root/img/<id>.jpg``, ``root/cls/<id>.mat`` (``GTcls``) and ``root/<image_set>.txt``;
reading the .mat files needs SciPy. ``mode='segmentation'``: the target is a PIL image of class indices;
``mode='boundaries'``: a (20, H, W) uint8 array, one boundary map per class.
"""
import os

import numpy as np

from .utils import verify_str_arg
from .vision import VisionDataset

__all__ = ['SBDataset']


class SBDataset(VisionDataset):
    url = 'https://www2.eecs.berkeley.edu/Research/Projects/CS/vision/grouping/semantic_contours/benchmark.tgz'

    def __init__(self, root, image_set='train', mode='boundaries', download=False, transforms=None):
        try:
            from scipy.io import loadmat
            self._loadmat = loadmat
        except ImportError:
            raise RuntimeError("Scipy is not found. This dataset needs to have scipy installed: pip install scipy")
        super().__init__(root, transforms)
        self.image_set = verify_str_arg(image_set, 'image_set', ('train', 'val', 'train_noval'))
        self.mode = verify_str_arg(mode, 'mode', ('segmentation', 'boundaries'))
        self.num_classes = 20
        if not os.path.isdir(self.root):
            raise RuntimeError('Dataset not found or corrupted. You can use download=True to download it')
        with open(os.path.join(self.root, image_set.rstrip('\n') + '.txt')) as fh:
            file_names = [x.strip() for x in fh.readlines()]
        self.images = [os.path.join(self.root, 'img', x + '.jpg') for x in file_names]
        self.masks = [os.path.join(self.root, 'cls', x + '.mat') for x in file_names]
        self._get_target = self._get_segmentation_target if self.mode == 'segmentation' else \
            self._get_boundaries_target

    def _get_segmentation_target(self, filepath):
        from .._pil import pil_image
        return pil_image().fromarray(self._loadmat(filepath)['GTcls'][0]['Segmentation'][0])

    def _get_boundaries_target(self, filepath):
        mat = self._loadmat(filepath)
        return np.concatenate([np.expand_dims(mat['GTcls'][0]['Boundaries'][0][i][0].toarray(), axis=0)
                               for i in range(self.num_classes)], axis=0)

    def __getitem__(self, index):
        from .._pil import pil_image
        img = pil_image().open(self.images[index]).convert('RGB')
        target = self._get_target(self.masks[index])
        if self.transforms is not None:
            img, target = self.transforms(img, target)
        return img, target

    def __len__(self):
        return len(self.images)

    def extra_repr(self):
        return '\n'.join(['Image set: {image_set}', 'Mode: {mode}']).format(**self.__dict__)
