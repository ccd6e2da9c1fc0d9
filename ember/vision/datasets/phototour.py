"""Multi-view Stereo Correspondence (PhotoTour / Brown) patches: 64x64 grayscale patches of Liberty, Notre Dame
and Yosemite, for learning local descriptors.

Layout as torchvision: ``root/<name>/`` holding the patch sheets (``*.bmp``, 1024x1024, 16x16 patches each, read
row by row in file-name order), ``info.txt`` (a 3D point id per patch) and ``m50_100000_100000_0.txt`` (pairs).
The first use reads them into ``root/<name>.pt`` (ember.save), later uses load that. Training items are uint8
(64, 64) patch tensors; test items ``(patch1, patch2, 1 if they show the same point else 0)``.
"""
import os

import numpy as np

import ember

from .vision import VisionDataset, missing_files_error

__all__ = ['PhotoTour']


class PhotoTour(VisionDataset):
    urls = {'notredame_harris': 'http://matthewalunbrown.com/patchdata/notredame_harris.zip',
            'yosemite_harris': 'http://matthewalunbrown.com/patchdata/yosemite_harris.zip',
            'liberty_harris': 'http://matthewalunbrown.com/patchdata/liberty_harris.zip',
            'notredame': 'http://icvl.ee.ic.ac.uk/vbalnt/notredame.zip',
            'yosemite': 'http://icvl.ee.ic.ac.uk/vbalnt/yosemite.zip',
            'liberty': 'http://icvl.ee.ic.ac.uk/vbalnt/liberty.zip'}
    means = {'notredame': 0.4854, 'yosemite': 0.4844, 'liberty': 0.4437, 'notredame_harris': 0.4854,
             'yosemite_harris': 0.4844, 'liberty_harris': 0.4437}
    stds = {'notredame': 0.1864, 'yosemite': 0.1818, 'liberty': 0.2019, 'notredame_harris': 0.1864,
            'yosemite_harris': 0.1818, 'liberty_harris': 0.2019}
    lens = {'notredame': 468159, 'yosemite': 633587, 'liberty': 450092, 'liberty_harris': 379587,
            'yosemite_harris': 450912, 'notredame_harris': 325295}
    image_ext = 'bmp'
    info_file = 'info.txt'
    matches_files = 'm50_100000_100000_0.txt'

    def __init__(self, root, name, train=True, transform=None, download=False):
        super().__init__(root, transform=transform)
        self.name, self.train = name, train
        self.data_dir = os.path.join(self.root, name)
        self.data_down = os.path.join(self.root, f'{name}.zip')
        self.data_file = os.path.join(self.root, f'{name}.pt')
        self.mean, self.std = self.means[name], self.stds[name]
        if not os.path.exists(self.data_file):
            self.cache()
        self.data, self.labels, self.matches = ember.load(self.data_file, weights_only=True)

    def __getitem__(self, index):
        if self.train:
            data = self.data[index]
            return self.transform(data) if self.transform is not None else data
        m = self.matches[index]
        data1, data2 = self.data[m[0]], self.data[m[1]]
        if self.transform is not None:
            data1, data2 = self.transform(data1), self.transform(data2)
        return data1, data2, m[2]

    def __len__(self):
        return len(self.data if self.train else self.matches)

    def cache(self):
        """Read the patch sheets, labels and matches into ``root/<name>.pt``."""
        if not os.path.isdir(self.data_dir):
            if os.path.isfile(self.data_down):
                from .utils import extract_archive
                extract_archive(self.data_down, self.data_dir)
            else:
                raise missing_files_error('PhotoTour', self.root, [self.name + '/'], [self.urls[self.name]])
        dataset = (read_image_file(self.data_dir, self.image_ext, self.lens[self.name]),
                   read_info_file(self.data_dir, self.info_file),
                   read_matches_files(self.data_dir, self.matches_files))
        ember.save(dataset, self.data_file)

    def extra_repr(self):
        return f"Split: {'Train' if self.train is True else 'Test'}"


def read_image_file(data_dir, image_ext, n):
    """The first ``n`` 64x64 patches of the sheets in ``data_dir``, as a uint8 (n, 64, 64) tensor."""
    from .._pil import pil_image
    files = sorted(os.path.join(data_dir, f) for f in os.listdir(data_dir) if f.endswith(image_ext))
    patches = []
    for fpath in files:
        img = pil_image().open(fpath)
        for y in range(0, img.height, 64):
            for x in range(0, img.width, 64):
                patches.append(np.array(img.crop((x, y, x + 64, y + 64)).getdata(), dtype=np.uint8).reshape(64, 64))
    return ember.tensor(np.array(patches[:n]), dtype=ember.uint8)


def read_info_file(data_dir, info_file):
    """Each patch's 3D point id (the first column of ``info.txt``)."""
    with open(os.path.join(data_dir, info_file)) as f:
        return ember.tensor([int(line.split()[0]) for line in f], dtype=ember.int64)


def read_matches_files(data_dir, matches_file):
    """Rows ``(patch 1, patch 2, same point)`` from a matches file."""
    matches = []
    with open(os.path.join(data_dir, matches_file)) as f:
        for line in f:
            s = line.split()
            matches.append([int(s[0]), int(s[3]), int(s[1] == s[4])])
    return ember.tensor(matches, dtype=ember.int64)
