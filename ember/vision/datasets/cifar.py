"""CIFAR-10 and CIFAR-100 from their python pickle batches, read with a restricted unpickler.

Layout as torchvision: ``root/cifar-10-batches-py/data_batch_1..5, test_batch, batches.meta`` and
``root/cifar-100-python/train, test, meta``. Each file's MD5 is checked against the published one,
as torchvision does (tests that write small batches set the expected MD5s on a subclass).
NOTE [CIFAR unpickler]: a batch is a dict of lists, bytes and one NumPy array; the unpickler
resolves only NumPy's array-reconstruction globals (``_reconstruct``, ``ndarray``, ``dtype``, and
``_frombuffer`` for protocol-5 pickles) and
``_codecs.encode`` (how protocol-2 pickles store bytes); any other global is refused, so a crafted
file cannot run code.
"""
import os
import pickle

import numpy as np

from .vision import VisionDataset, check_integrity, missing_files_error

_ALLOWED = {('numpy.core.multiarray', '_reconstruct'), ('numpy._core.multiarray', '_reconstruct'),
            ('numpy.core.numeric', '_frombuffer'), ('numpy._core.numeric', '_frombuffer'),
            ('numpy', 'ndarray'), ('numpy', 'dtype'), ('_codecs', 'encode')}


class _BatchUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"CIFAR batch refers to {module}.{name}, which is not allowed in a dataset "
                                     "file (see NOTE [CIFAR unpickler])")


def load_batch(path):
    """One CIFAR pickle file as a dict with str keys (latin1, as torchvision reads them)."""
    with open(path, 'rb') as f:
        try:
            return _BatchUnpickler(f, encoding='latin1').load()
        except (pickle.UnpicklingError, EOFError, ValueError) as e:
            raise RuntimeError(f"{path}: not a readable CIFAR batch ({e})") from None


class CIFAR10(VisionDataset):
    """CIFAR-10: 32×32 colour images in 10 classes; items are ``(PIL RGB image, int label)``."""

    base_folder = 'cifar-10-batches-py'
    url = 'https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz'
    filename = 'cifar-10-python.tar.gz'
    tgz_md5 = 'c58f30108f718f92721af3b95e74349a'
    train_list = [['data_batch_1', 'c99cafc152244af753f735de768cd75f'],
                  ['data_batch_2', 'd4bba439e000b95fd0a9bffe97cbabec'],
                  ['data_batch_3', '54ebc095f3ab1f0389bbae665268c751'],
                  ['data_batch_4', '634d18415352ddfa80567beed471001a'],
                  ['data_batch_5', '482c414d41f54cd18b22e5b47cb7c3cb']]
    test_list = [['test_batch', '40351d587109b95175f43aff81a1287e']]
    meta = {'filename': 'batches.meta', 'key': 'label_names', 'md5': '5ff9c542aee3614f3951f8cda6e48888'}

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        if not self._check_integrity():
            if self._all_present():
                raise RuntimeError("Dataset not found or corrupted (MD5 mismatch in "
                                   f"{os.path.join(self.root, self.base_folder)}). You can use download=True to "
                                   "download it")
            raise self._missing()
        files = self.train_list if self.train else self.test_list
        data, self.targets = [], []
        for name, _ in files:
            entry = load_batch(os.path.join(self.root, self.base_folder, name))
            data.append(entry['data'])
            self.targets.extend(entry['labels'] if 'labels' in entry else entry['fine_labels'])
        self.data = np.vstack(data).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))   # HWC for PIL
        if len(self.data) != len(self.targets):
            raise RuntimeError(f"{self.base_folder}: {len(self.data)} images but {len(self.targets)} labels")
        self._load_meta()

    def _files(self):
        return self.train_list + self.test_list + [[self.meta['filename'], self.meta['md5']]]

    def _all_present(self):
        return all(os.path.isfile(os.path.join(self.root, self.base_folder, f)) for f, _ in self._files())

    def _missing(self):
        return missing_files_error(self.__class__.__name__, os.path.join(self.root, self.base_folder),
                                   [f for f, _ in self._files()], [self.url + ' (extract into root)'])

    def _load_meta(self):
        path = os.path.join(self.root, self.base_folder, self.meta['filename'])
        if not check_integrity(path, self.meta['md5']):
            raise RuntimeError("Dataset metadata file not found or corrupted. You can use download=True to download it")
        self.classes = load_batch(path)[self.meta['key']]
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}

    def _check_integrity(self):
        return all(check_integrity(os.path.join(self.root, self.base_folder, f), md5) for f, md5 in self._files())

    def download(self):
        if self._check_integrity():
            return
        raise self._missing()

    def __getitem__(self, index):
        from .._pil import pil_image
        img, target = self.data[index], self.targets[index]
        img = pil_image().fromarray(img)
        img, target = self._apply_transforms(img, target)
        return img, target

    def __len__(self):
        return len(self.data)

    def extra_repr(self):
        return f"Split: {'Train' if self.train is True else 'Test'}"


class CIFAR100(CIFAR10):
    """CIFAR-100: 100 fine classes; ``targets`` are the fine labels, as torchvision."""

    base_folder = 'cifar-100-python'
    url = 'https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz'
    filename = 'cifar-100-python.tar.gz'
    tgz_md5 = 'eb9058c3a382ffc7106e4002c42a8d85'
    train_list = [['train', '16019d7e3df5f24257cddd939b257f8d']]
    test_list = [['test', 'f0ef6b0ae62326f3e7ffdfab6717acfc']]
    meta = {'filename': 'meta', 'key': 'fine_label_names', 'md5': '7973b15100ade9c7d40fb424638fde48'}
