"""MNIST, FashionMNIST, KMNIST and EMNIST read from idx files (gzip-compressed or not), NumPy only.

Layout as torchvision: ``root/<ClassName>/raw/<name>-idx3-ubyte[.gz]``. Each idx file is checked
against its header: the magic number (type code and number of dimensions), the sizes, and a
payload of exactly the announced length; a corrupt or truncated file raises a RuntimeError that
names it. Items are ``(PIL image in mode 'L', int label)``, so ``__getitem__`` needs Pillow.
"""
import gzip
import os
import string

import numpy as np

import ember

from .vision import VisionDataset, missing_files_error

_IDX_TYPES = {8: np.uint8, 9: np.int8, 11: np.dtype('>i2'), 12: np.dtype('>i4'), 13: np.dtype('>f4'),
              14: np.dtype('>f8')}


def _read_bytes(path):
    for p in (path, path + '.gz'):
        if os.path.isfile(p):
            if p.endswith('.gz'):
                try:
                    with gzip.open(p, 'rb') as f:
                        return f.read()
                except (OSError, EOFError) as e:
                    raise RuntimeError(f"{p} is not a valid gzip file ({e})") from None
            with open(p, 'rb') as f:
                return f.read()
    raise FileNotFoundError(path)


def read_sn3_pascalvincent_tensor(path, strict=True):
    """Read an idx file (LeCun's format: big-endian magic ``0x0000TTDD``, D sizes, then the data)."""
    data = _read_bytes(path)
    if len(data) < 4:
        raise RuntimeError(f"{path}: truncated idx file ({len(data)} bytes, no header)")
    magic = int.from_bytes(data[0:4], 'big')
    nd, ty = magic % 256, magic // 256
    if not (1 <= nd <= 3) or ty not in _IDX_TYPES:
        raise RuntimeError(f"{path}: not an idx file (magic number {magic:#010x})")
    if len(data) < 4 * (nd + 1):
        raise RuntimeError(f"{path}: truncated idx header")
    sizes = [int.from_bytes(data[4 * (i + 1):4 * (i + 2)], 'big') for i in range(nd)]
    dtype = np.dtype(_IDX_TYPES[ty])
    expected = int(np.prod(sizes)) * dtype.itemsize
    payload = len(data) - 4 * (nd + 1)
    if payload != expected:
        raise RuntimeError(f"{path}: idx header announces {sizes} items of {dtype} ({expected} bytes) but the "
                           f"file holds {payload} bytes (truncated or corrupt)")
    arr = np.frombuffer(data, dtype=dtype, offset=4 * (nd + 1)).astype(dtype.newbyteorder('='))
    return ember.from_numpy(arr.reshape(sizes).copy())


def read_label_file(path):
    x = read_sn3_pascalvincent_tensor(path, strict=False)
    if x.dtype != ember.uint8:
        raise TypeError(f"x should be of dtype torch.uint8 instead of {x.dtype}")
    if x.dim() != 1:
        raise ValueError(f"x should have 1 dimension instead of {x.dim()}")
    return x.long()


def read_image_file(path):
    x = read_sn3_pascalvincent_tensor(path, strict=False)
    if x.dtype != ember.uint8:
        raise TypeError(f"x should be of dtype torch.uint8 instead of {x.dtype}")
    if x.dim() != 3:
        raise ValueError(f"x should have 3 dimension instead of {x.dim()}")
    return x


class MNIST(VisionDataset):
    """LeCun's handwritten digits from ``root/MNIST/raw``.

    >>> ds = MNIST('data', train=True, transform=transforms.ToTensor())   # doctest: +SKIP
    >>> img, label = ds[0]                                                 # doctest: +SKIP
    """

    mirrors = ['https://ossci-datasets.s3.amazonaws.com/mnist/', 'http://yann.lecun.com/exdb/mnist/']
    resources = [('train-images-idx3-ubyte.gz', 'f68b3c2dcbeaaa9fbdd348bbdeb94873'),
                 ('train-labels-idx1-ubyte.gz', 'd53e105ee54ea40749a09fcbcd1e9432'),
                 ('t10k-images-idx3-ubyte.gz', '9fb629c4189551a2d022fa330f9573f3'),
                 ('t10k-labels-idx1-ubyte.gz', 'ec29112dd5afa0611ce80d1b7f02629c')]
    training_file = 'training.pt'
    test_file = 'test.pt'
    classes = ['0 - zero', '1 - one', '2 - two', '3 - three', '4 - four', '5 - five', '6 - six', '7 - seven',
               '8 - eight', '9 - nine']

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download or not self._check_exists():
            self.download()             # raises, saying where to put the files, when they are absent
        self.data, self.targets = self._load_data()

    def _raw_names(self):
        return [os.path.splitext(os.path.basename(f))[0] for f, _ in self.resources]

    def _file_prefix(self):
        return 'train' if self.train else 't10k'

    def _load_data(self):
        data = read_image_file(os.path.join(self.raw_folder, f'{self._file_prefix()}-images-idx3-ubyte'))
        targets = read_label_file(os.path.join(self.raw_folder, f'{self._file_prefix()}-labels-idx1-ubyte'))
        if data.shape[0] != targets.shape[0]:
            raise RuntimeError(f"{self.raw_folder}: {data.shape[0]} images but {targets.shape[0]} labels")
        return data, targets

    @property
    def raw_folder(self):
        return os.path.join(self.root, self.__class__.__name__, 'raw')

    @property
    def processed_folder(self):
        return os.path.join(self.root, self.__class__.__name__, 'processed')

    @property
    def class_to_idx(self):
        return {c: i for i, c in enumerate(self.classes)}

    @property
    def train_labels(self):
        return self.targets

    @property
    def test_labels(self):
        return self.targets

    @property
    def train_data(self):
        return self.data

    @property
    def test_data(self):
        return self.data

    def _check_exists(self):
        """Each raw file is present, unpacked or as its ``.gz``."""
        return all(os.path.isfile(os.path.join(self.raw_folder, n)) or
                   os.path.isfile(os.path.join(self.raw_folder, n + '.gz')) for n in self._raw_names())

    def download(self):
        """Nothing to do when the files are present; otherwise ember says where to put them."""
        if self._check_exists():
            return
        raise missing_files_error(self.__class__.__name__, self.raw_folder, self._raw_names(),
                                  [m + f for m in self.mirrors[:1] for f, _ in self.resources],
                                  note=' (each may also be gzip-compressed, named with .gz appended)')

    def _arrays(self):
        """NumPy views of ``data`` and ``targets`` (sharing their memory), made again when either attribute is
        reassigned (``ds.data = ds.data[:1000]``): indexing them per sample costs no operator calls."""
        cache = self.__dict__.get('_array_cache')
        if cache is None or cache[0] is not self.data or cache[1] is not self.targets:
            cache = self._array_cache = (self.data, self.targets, self.data.numpy(), self.targets.numpy())
        return cache[2], cache[3]

    def __getitem__(self, index):
        from .._pil import pil_image
        data, targets = self._arrays()
        img, target = data[index], int(targets[index])
        img = pil_image().fromarray(img, mode='L')
        img, target = self._apply_transforms(img, target)
        return img, target

    def __len__(self):
        return len(self.data)

    def extra_repr(self):
        return f"Split: {'Train' if self.train is True else 'Test'}"


class FashionMNIST(MNIST):
    """Zalando's clothing images in MNIST's format, from ``root/FashionMNIST/raw``."""
    mirrors = ['http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/']
    resources = [('train-images-idx3-ubyte.gz', '8d4fb7e6c68d591d4c3dfef9ec88bf0d'),
                 ('train-labels-idx1-ubyte.gz', '25c81989df183df01b3e8a0aad5dffbe'),
                 ('t10k-images-idx3-ubyte.gz', 'bef4ecab320f06d8554ea6380940ec79'),
                 ('t10k-labels-idx1-ubyte.gz', 'bb300cfdad3c16e7a12a480ee83cd310')]
    classes = ['T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal', 'Shirt', 'Sneaker', 'Bag',
               'Ankle boot']


class KMNIST(MNIST):
    """Kuzushiji (cursive Japanese) characters in MNIST's format, from ``root/KMNIST/raw``."""
    mirrors = ['http://codh.rois.ac.jp/kmnist/dataset/kmnist/']
    resources = [('train-images-idx3-ubyte.gz', 'bdb82020997e1d708af4cf47b453dcf7'),
                 ('train-labels-idx1-ubyte.gz', 'e144d726b3acfaa3e44228e80efcd344'),
                 ('t10k-images-idx3-ubyte.gz', '5c965bf0a639b31b8f53240b1b52f4d7'),
                 ('t10k-labels-idx1-ubyte.gz', '7320c461ea6c1c855c0b718fb2a4b134')]
    classes = ['o', 'ki', 'su', 'tsu', 'na', 'ha', 'ma', 'ya', 're', 'wo']


class EMNIST(MNIST):
    """Extended MNIST (letters and digits), one ``split`` of six, from ``root/EMNIST/raw``.

    Images are stored transposed (as published and as torchvision returns them).
    """
    url = 'https://biometrics.nist.gov/cs_links/EMNIST/gzip.zip'
    splits = ('byclass', 'bymerge', 'balanced', 'letters', 'digits', 'mnist')
    _merged_classes = {'c', 'i', 'j', 'k', 'l', 'm', 'o', 'p', 's', 'u', 'v', 'w', 'x', 'y', 'z'}
    _all_classes = set(string.digits + string.ascii_letters)
    classes_split_dict = {
        'byclass': sorted(_all_classes),
        'bymerge': sorted(_all_classes - _merged_classes),
        'balanced': sorted(_all_classes - _merged_classes),
        'letters': ['N/A'] + list(string.ascii_lowercase),
        'digits': list(string.digits),
        'mnist': list(string.digits),
    }

    def __init__(self, root, split, **kwargs):
        if split not in self.splits:
            raise ValueError(f"Unknown value '{split}' for argument split. Valid values are "
                             f"{{{', '.join(repr(s) for s in self.splits)}}}.")
        self.split = split
        self.classes = self.classes_split_dict[split]
        super().__init__(root, **kwargs)

    def _raw_names(self):
        return [f'emnist-{self.split}-{p}-{k}-idx{d}-ubyte' for p in ('train', 'test')
                for k, d in (('images', 3), ('labels', 1))]

    def _load_data(self):
        p = 'train' if self.train else 'test'
        data = read_image_file(os.path.join(self.raw_folder, f'emnist-{self.split}-{p}-images-idx3-ubyte'))
        targets = read_label_file(os.path.join(self.raw_folder, f'emnist-{self.split}-{p}-labels-idx1-ubyte'))
        return data, targets

    def download(self):
        if self._check_exists():
            return
        raise missing_files_error('EMNIST', self.raw_folder, self._raw_names(), [self.url],
                                  note=' (each may also be gzip-compressed, named with .gz appended)')


class QMNIST(MNIST):
    """QMNIST (Yadav and Bottou): MNIST's test set reconstructed from NIST, 60k more test digits, and extended
    labels; from ``root/QMNIST/raw``.

    ``what`` picks the subset: 'train', 'test' (60k), 'test10k' (its first 10k, MNIST's test set), 'test50k' (the
    rest) or 'nist' (all 402953). Labels are int32 rows of 8 (class, NIST writer and series, ...); with ``compat``
    (the default) the target is the class as an int, as MNIST's.
    """
    subsets = {'train': 'train', 'test': 'test', 'test10k': 'test', 'test50k': 'test', 'nist': 'nist'}
    resources = {'train': [('https://raw.githubusercontent.com/facebookresearch/qmnist/master/'
                            'qmnist-train-images-idx3-ubyte.gz', 'ed72d4157d28c017586c42bc6afe6370'),
                           ('https://raw.githubusercontent.com/facebookresearch/qmnist/master/'
                            'qmnist-train-labels-idx2-int.gz', '0058f8dd561b90ffdd0f734c6a30e5e4')],
                 'test': [('https://raw.githubusercontent.com/facebookresearch/qmnist/master/'
                           'qmnist-test-images-idx3-ubyte.gz', '1394631089c404de565df7b7aeaf9412'),
                          ('https://raw.githubusercontent.com/facebookresearch/qmnist/master/'
                           'qmnist-test-labels-idx2-int.gz', '5b5b05890a5e13444e108efe57b788aa')],
                 'nist': [('https://raw.githubusercontent.com/facebookresearch/qmnist/master/'
                           'xnist-images-idx3-ubyte.xz', '7f124b3b8ab81486c9d8c2749c17f834'),
                          ('https://raw.githubusercontent.com/facebookresearch/qmnist/master/'
                           'xnist-labels-idx2-int.xz', '5ed0e788978e45d4a8bd4b7caec3d79d')]}
    classes = MNIST.classes

    def __init__(self, root, what=None, compat=True, train=True, **kwargs):
        from .utils import verify_str_arg
        if what is None:
            what = 'train' if train else 'test'
        self.what = verify_str_arg(what, 'what', tuple(self.subsets.keys()))
        self.compat = compat
        self.data_file = what + '.pt'
        self.training_file = self.test_file = self.data_file
        super().__init__(root, train, **kwargs)

    @property
    def images_file(self):
        return os.path.join(self.raw_folder, self._raw_names()[0])

    @property
    def labels_file(self):
        return os.path.join(self.raw_folder, self._raw_names()[1])

    def _raw_names(self):
        return [os.path.basename(url).rsplit('.', 1)[0] for url, _ in self.resources[self.subsets[self.what]]]

    def _load_data(self):
        data = read_sn3_pascalvincent_tensor(self.images_file)
        if data.dtype != ember.uint8 or data.ndim != 3:
            raise RuntimeError(f"{self.images_file}: expected uint8 images of 3 dimensions")
        targets = read_sn3_pascalvincent_tensor(self.labels_file).long()
        if targets.ndim != 2:
            raise RuntimeError(f"{self.labels_file}: expected labels of 2 dimensions")
        if self.what == 'test10k':
            data, targets = data[0:10000].clone(), targets[0:10000].clone()
        elif self.what == 'test50k':
            data, targets = data[10000:].clone(), targets[10000:].clone()
        return data, targets

    def download(self):
        if self._check_exists():
            return
        raise missing_files_error('QMNIST', self.raw_folder, self._raw_names(),
                                  [url for url, _ in self.resources[self.subsets[self.what]]],
                                  note=' (each may also be gzip-compressed, named with .gz appended)')

    def __getitem__(self, index):
        from .._pil import pil_image
        img, target = self.data[index], self.targets[index]
        img = pil_image().fromarray(img.numpy(), mode='L')
        if self.transform is not None:
            img = self.transform(img)
        target = int(target[0]) if self.compat else target
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def extra_repr(self):
        return f"Split: {self.what}"
