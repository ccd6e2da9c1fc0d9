"""STL10: 96x96 RGB images of 10 classes, in raw binary files, with 100k unlabeled images.

Layout as torchvision: ``root/stl10_binary/{train,test,unlabeled}_X.bin`` (uint8, each image 3x96x96 stored
column-major), ``{train,test}_y.bin`` (uint8 labels 1..10, read as 0..9), ``class_names.txt``, and
``fold_indices.txt`` (ten lines of training indices, for ``folds``). Unlabeled images have label -1. An item is
``(PIL RGB image, int label)``.
"""
import os

import numpy as np

from .utils import verify_str_arg
from .vision import VisionDataset, missing_files_error

__all__ = ['STL10']


class STL10(VisionDataset):
    """``STL10(root, split='train', folds=None)``; ``split`` is 'train', 'test', 'unlabeled' or
    'train+unlabeled'; ``folds`` (0..9) keeps that fold of the training images."""
    base_folder = 'stl10_binary'
    url = 'http://ai.stanford.edu/~acoates/stl10/stl10_binary.tar.gz'
    class_names_file = 'class_names.txt'
    folds_list_file = 'fold_indices.txt'
    train_list = [['train_X.bin', '918c2871b30a85fa023e0c44e0bee87f'], ['train_y.bin', '5a34089d4802c674881badbb80307741'],
                  ['unlabeled_X.bin', '5242ba1fed5e4be9e1e742405eb56ca4']]
    test_list = [['test_X.bin', '7f263ba9f9e0b06b93213547f721ac82'], ['test_y.bin', '36f9794fa4beb8a2c72628de14fa638e']]
    splits = ('train', 'train+unlabeled', 'unlabeled', 'test')

    def __init__(self, root, split='train', folds=None, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, 'split', self.splits)
        self.folds = self._verify_folds(folds)
        if download or not self._check_integrity():
            self.download()
        if self.split == 'train':
            self.data, self.labels = self.__loadfile(self.train_list[0][0], self.train_list[1][0])
            self.labels = np.asarray(self.labels)
            self.__load_folds(folds)
        elif self.split == 'train+unlabeled':
            self.data, self.labels = self.__loadfile(self.train_list[0][0], self.train_list[1][0])
            self.labels = np.asarray(self.labels)
            self.__load_folds(folds)
            unlabeled, _ = self.__loadfile(self.train_list[2][0])
            self.data = np.concatenate((self.data, unlabeled))
            self.labels = np.concatenate((self.labels, np.asarray([-1] * unlabeled.shape[0])))
        elif self.split == 'unlabeled':
            self.data, _ = self.__loadfile(self.train_list[2][0])
            self.labels = np.asarray([-1] * self.data.shape[0])
        else:
            self.data, self.labels = self.__loadfile(self.test_list[0][0], self.test_list[1][0])
        class_file = os.path.join(self.root, self.base_folder, self.class_names_file)
        if os.path.isfile(class_file):
            with open(class_file) as f:
                self.classes = f.read().splitlines()

    def _verify_folds(self, folds):
        if folds is None:
            return folds
        if isinstance(folds, int):
            if folds in range(10):
                return folds
            raise ValueError(f"Value for argument folds should be in the range [0, 10), but got {folds}.")
        raise ValueError(f"Expected type None or int for argument folds, but got type {type(folds)}.")

    def __getitem__(self, index):
        from .._pil import pil_image
        target = int(self.labels[index]) if self.labels is not None else None
        img = pil_image().fromarray(np.transpose(self.data[index], (1, 2, 0)))
        img, target = self._apply_transforms(img, target)
        return img, target

    def __len__(self):
        return self.data.shape[0]

    def __loadfile(self, data_file, labels_file=None):
        labels = None
        if labels_file:
            labels = np.fromfile(os.path.join(self.root, self.base_folder, labels_file), dtype=np.uint8) - 1
        everything = np.fromfile(os.path.join(self.root, self.base_folder, data_file), dtype=np.uint8)
        images = np.transpose(np.reshape(everything, (-1, 3, 96, 96)), (0, 1, 3, 2))
        return images, labels

    def _files(self):
        return [f for f, _ in self.train_list + self.test_list]

    def _check_integrity(self):
        return all(os.path.isfile(os.path.join(self.root, self.base_folder, f)) for f in self._files())

    def download(self):
        if not self._check_integrity():
            raise missing_files_error('STL10', os.path.join(self.root, self.base_folder), self._files(),
                                      [self.url + ' (extract into root)'])

    def extra_repr(self):
        return 'Split: {split}'.format(**self.__dict__)

    def __load_folds(self, folds):
        if folds is None:
            return
        with open(os.path.join(self.root, self.base_folder, self.folds_list_file)) as f:
            idx = np.array(f.read().splitlines()[folds].split(), dtype=np.int64)
        self.data, self.labels = self.data[idx, :, :, :], self.labels[idx]
