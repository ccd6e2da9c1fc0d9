"""SVHN: house-number digits from Google Street View, 32x32 RGB, in MATLAB files.

Layout as torchvision: ``root/train_32x32.mat``, ``test_32x32.mat``, ``extra_32x32.mat``; reading them needs
SciPy (``scipy.io.loadmat``), as torchvision. Label 10 (the digit 0 in the files) is 0. An item is ``(PIL RGB
image, int label)``.
"""
import os

import numpy as np

from .utils import verify_str_arg
from .vision import VisionDataset, missing_files_error

__all__ = ['SVHN']


class SVHN(VisionDataset):
    """``SVHN(root, split='train')``; ``split`` is 'train', 'test' or 'extra'."""
    split_list = {'train': ['http://ufldl.stanford.edu/housenumbers/train_32x32.mat', 'train_32x32.mat',
                            'e26dedcc434d2e4c54c9b2d4a06d8373'],
                  'test': ['http://ufldl.stanford.edu/housenumbers/test_32x32.mat', 'test_32x32.mat',
                           'eb5a983be6a315427106f1b164d9cef3'],
                  'extra': ['http://ufldl.stanford.edu/housenumbers/extra_32x32.mat', 'extra_32x32.mat',
                            'a93ce644f1a588dc4d68dda5feec44a7']}

    def __init__(self, root, split='train', transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, 'split', tuple(self.split_list.keys()))
        self.url, self.filename, self.file_md5 = self.split_list[split]
        if download or not self._check_integrity():
            self.download()
        import scipy.io as sio          # torchvision's requirement, imported as it does: only here
        loaded = sio.loadmat(os.path.join(self.root, self.filename))
        self.data = np.transpose(loaded['X'], (3, 2, 0, 1))
        self.labels = loaded['y'].astype(np.int64).squeeze()
        np.place(self.labels, self.labels == 10, 0)

    def __getitem__(self, index):
        from .._pil import pil_image
        img, target = self.data[index], int(self.labels[index])
        img = pil_image().fromarray(np.transpose(img, (1, 2, 0)))
        img, target = self._apply_transforms(img, target)
        return img, target

    def __len__(self):
        return len(self.data)

    def _check_integrity(self):
        return os.path.isfile(os.path.join(self.root, self.filename))

    def download(self):
        if not self._check_integrity():
            raise missing_files_error('SVHN', self.root, [self.filename], [self.url])

    def extra_repr(self):
        return 'Split: {split}'.format(**self.__dict__)
