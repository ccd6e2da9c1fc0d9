"""LSUN scene categories, stored as LMDB databases of encoded images (reading them needs the ``lmdb`` package, as
torchvision).

Layout as torchvision: ``root/<category>_<train|val>_lmdb`` (``root/test_lmdb``). ``classes`` is 'train',
'val', 'test' or a list such as ``['bedroom_train', 'church_outdoor_train']``; an item is ``(PIL RGB image,
index of its class in that list)``. Each database's keys are cached in ``_cache_<letters of its path>`` in the
working directory, as torchvision.
"""
import io
import os.path
import pickle
import string
from collections.abc import Iterable

from .utils import iterable_to_str, verify_str_arg
from .vision import VisionDataset

__all__ = ['LSUN', 'LSUNClass']


class LSUNClass(VisionDataset):
    def __init__(self, root, transform=None, target_transform=None):
        import lmdb
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.env = lmdb.open(root, max_readers=1, readonly=True, lock=False, readahead=False, meminit=False)
        with self.env.begin(write=False) as txn:
            self.length = txn.stat()['entries']
        cache_file = '_cache_' + ''.join(c for c in root if c in string.ascii_letters)
        if os.path.isfile(cache_file):
            with open(cache_file, 'rb') as f:
                self.keys = pickle.load(f)
        else:
            with self.env.begin(write=False) as txn:
                self.keys = [key for key in txn.cursor().iternext(keys=True, values=False)]
            with open(cache_file, 'wb') as f:
                pickle.dump(self.keys, f)

    def __getitem__(self, index):
        from .._pil import pil_image
        with self.env.begin(write=False) as txn:
            imgbuf = txn.get(self.keys[index])
        img = pil_image().open(io.BytesIO(imgbuf)).convert('RGB')
        target = None
        img, target = self._apply_transforms(img, target)
        return img, target

    def __len__(self):
        return self.length


class LSUN(VisionDataset):
    categories = ['bedroom', 'bridge', 'church_outdoor', 'classroom', 'conference_room', 'dining_room', 'kitchen',
                  'living_room', 'restaurant', 'tower']

    def __init__(self, root, classes='train', transform=None, target_transform=None):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.classes = self._verify_classes(classes)
        self.dbs = [LSUNClass(root=os.path.join(root, f'{c}_lmdb'), transform=transform) for c in self.classes]
        self.indices, count = [], 0
        for db in self.dbs:
            count += len(db)
            self.indices.append(count)
        self.length = count

    def _verify_classes(self, classes):
        dset_opts = ['train', 'val', 'test']
        try:
            verify_str_arg(classes, 'classes', dset_opts)
            return [classes] if classes == 'test' else [c + '_' + classes for c in self.categories]
        except ValueError:
            if not isinstance(classes, Iterable):
                raise ValueError(f"Expected type str or Iterable for argument classes, but got type {type(classes)}.")
            classes = list(classes)
            for c in classes:
                verify_str_arg(c, custom_msg=f"Expected type str for elements in argument classes, but got type "
                                             f"{type(c)}.")
                parts = c.split('_')
                category, dset_opt = '_'.join(parts[:-1]), parts[-1]
                fmt = "Unknown value '{}' for {}. Valid values are {{{}}}."
                verify_str_arg(category, valid_values=self.categories,
                               custom_msg=fmt.format(category, 'LSUN class', iterable_to_str(self.categories)))
                verify_str_arg(dset_opt, valid_values=dset_opts,
                               custom_msg=fmt.format(dset_opt, 'postfix', iterable_to_str(dset_opts)))
            return classes

    def __getitem__(self, index):
        target = sub = 0
        for ind in self.indices:
            if index < ind:
                break
            target += 1
            sub = ind
        img, _ = self.dbs[target][index - sub]
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return self.length

    def extra_repr(self):
        return 'Classes: {classes}'.format(**self.__dict__)
