"""USPS: 16x16 grayscale handwritten digits, in LIBSVM text format compressed with bzip2.

Layout as torchvision: ``root/usps.bz2`` (training) and ``root/usps.t.bz2`` (test). Each line is ``label
index:value ...`` with values in [-1, 1] and labels 1..10; images become uint8 ``(value + 1) / 2 * 255`` and
labels 0..9. An item is ``(PIL image in mode 'L', int label)``.
"""
import bz2
import os

import numpy as np

from .vision import VisionDataset, missing_files_error

__all__ = ['USPS']


class USPS(VisionDataset):
    """``USPS(root, train=True)``."""
    split_list = {'train': ['https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/usps.bz2',
                            'usps.bz2', 'ec16c51db3855ca6c91edd34d0e9b197'],
                  'test': ['https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/usps.t.bz2',
                           'usps.t.bz2', '8ea070ee2aca1ac39742fdd1ef5ed118']}

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        url, filename, _ = self.split_list['train' if train else 'test']
        full_path = os.path.join(self.root, filename)
        if not os.path.exists(full_path):
            raise missing_files_error('USPS', self.root, [filename], [url])
        with bz2.open(full_path) as fp:
            raw = [line.decode().split() for line in fp.readlines()]
        values = [[x.split(':')[-1] for x in row[1:]] for row in raw]
        imgs = np.asarray(values, dtype=np.float32).reshape((-1, 16, 16))
        self.data = ((imgs + 1) / 2 * 255).astype(dtype=np.uint8)
        self.targets = [int(row[0]) - 1 for row in raw]

    def __getitem__(self, index):
        from .._pil import pil_image
        img, target = self.data[index], int(self.targets[index])
        img = pil_image().fromarray(img, mode='L')
        img, target = self._apply_transforms(img, target)
        return img, target

    def __len__(self):
        return len(self.data)
