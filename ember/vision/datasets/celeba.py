"""CelebA: 202599 aligned face images with 40 binary attributes, identities, boxes and landmarks.

Layout as torchvision: ``root/celeba/`` holding ``img_align_celeba/<000001.jpg ...>``, ``list_eval_partition.txt``
(image, split 0/1/2), ``identity_CelebA.txt``, ``list_attr_celeba.txt``, ``list_bbox_celeba.txt`` and
``list_landmarks_align_celeba.txt`` (the last three: a count line, a header line, then rows). Attributes are 0/1
(the files' -1/1). An item is ``(PIL image, target)``: the target is the ``target_type`` requested ('attr': the
40 attributes, 'identity': an int64 scalar tensor, 'bbox', 'landmarks'), a tuple for several, None for none.
"""
import csv
import os
from collections import namedtuple

import ember

from .utils import verify_str_arg
from .vision import VisionDataset, missing_files_error

__all__ = ['CelebA']

CSV = namedtuple('CSV', ['header', 'index', 'data'])


class CelebA(VisionDataset):
    """``CelebA(root, split='train', target_type='attr')``; ``split`` is 'train', 'valid', 'test' or 'all'."""
    base_folder = 'celeba'
    file_list = [('0B7EVK8r0v71pZjFTYXZWM3FlRnM', '00d2c5bc6d35e252742224ab0c1e8fcb', 'img_align_celeba.zip'),
                 ('0B7EVK8r0v71pblRyaVFSWGxPY0U', '75e246fa4810816ffd6ee81facbd244c', 'list_attr_celeba.txt'),
                 ('1_ee_0u7vcNLOfNLegJRHmolfH5ICW-XS', '32bd1bd63d3c78cd57e08160ec5ed1e2', 'identity_CelebA.txt'),
                 ('0B7EVK8r0v71pbThiMVRxWXZ4dU0', '00566efa6fedff7a56946cd1c10f1c16', 'list_bbox_celeba.txt'),
                 ('0B7EVK8r0v71pd0FJY3Blby1HUTQ', 'cc24ecafdb5b50baae59b03474781f8c',
                  'list_landmarks_align_celeba.txt'),
                 ('0B7EVK8r0v71pY0NSMzRuSXJEVkk', 'd32c9cbf5e040fd4025c592c306e6668', 'list_eval_partition.txt')]

    def __init__(self, root, split='train', target_type='attr', transform=None, target_transform=None,
                 download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = split
        self.target_type = list(target_type) if isinstance(target_type, list) else [target_type]
        if not self.target_type and self.target_transform is not None:
            raise RuntimeError("target_transform is specified but target_type is empty")
        if download or not self._check_integrity():
            self.download()
        split_ = {'train': 0, 'valid': 1, 'test': 2, 'all': None}[
            verify_str_arg(split.lower(), 'split', ('train', 'valid', 'test', 'all'))]
        splits = self._load_csv('list_eval_partition.txt')
        identity = self._load_csv('identity_CelebA.txt')
        bbox = self._load_csv('list_bbox_celeba.txt', header=1)
        landmarks_align = self._load_csv('list_landmarks_align_celeba.txt', header=1)
        attr = self._load_csv('list_attr_celeba.txt', header=1)
        if split_ is None:
            mask, self.filename = slice(None), splits.index
        else:
            mask = (splits.data == split_).squeeze(1)
            self.filename = [splits.index[i] for i in ember.nonzero(mask).reshape(-1).tolist()]
        self.identity, self.bbox = identity.data[mask], bbox.data[mask]
        self.landmarks_align, self.attr = landmarks_align.data[mask], attr.data[mask]
        self.attr = ember.div(self.attr + 1, 2, rounding_mode='floor')      # -1/1 -> 0/1
        self.attr_names = attr.header

    def _load_csv(self, filename, header=None):
        with open(os.path.join(self.root, self.base_folder, filename)) as csv_file:
            data = list(csv.reader(csv_file, delimiter=' ', skipinitialspace=True))
        headers = []
        if header is not None:
            headers, data = data[header], data[header + 1:]
        indices = [row[0] for row in data]
        return CSV(headers, indices, ember.tensor([list(map(int, row[1:])) for row in data]))

    def _check_integrity(self):
        folder = os.path.join(self.root, self.base_folder)
        return (all(os.path.isfile(os.path.join(folder, f)) for _, _, f in self.file_list if f.endswith('.txt'))
                and os.path.isdir(os.path.join(folder, 'img_align_celeba')))

    def download(self):
        if self._check_integrity():
            return
        raise missing_files_error('CelebA', os.path.join(self.root, self.base_folder),
                                  ['img_align_celeba/'] + [f for _, _, f in self.file_list if f.endswith('.txt')],
                                  ['https://mmlab.ie.cuhk.edu.hk/projects/CelebA.html'])

    def __getitem__(self, index):
        from .._pil import pil_image
        X = pil_image().open(os.path.join(self.root, self.base_folder, 'img_align_celeba', self.filename[index]))
        target = []
        for t in self.target_type:
            if t == 'attr':
                target.append(self.attr[index, :])
            elif t == 'identity':
                target.append(self.identity[index, 0])
            elif t == 'bbox':
                target.append(self.bbox[index, :])
            elif t == 'landmarks':
                target.append(self.landmarks_align[index, :])
            else:
                raise ValueError(f'Target type "{t}" is not recognized.')
        if self.transform is not None:
            X = self.transform(X)
        if target:
            target = tuple(target) if len(target) > 1 else target[0]
            if self.target_transform is not None:
                target = self.target_transform(target)
        else:
            target = None
        return X, target

    def __len__(self):
        return len(self.attr)

    def extra_repr(self):
        return '\n'.join(['Target type: {target_type}', 'Split: {split}']).format(**self.__dict__)
