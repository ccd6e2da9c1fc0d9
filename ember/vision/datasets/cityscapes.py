"""Cityscapes: street scenes with fine or coarse annotations.

Layout as torchvision: ``root/leftImg8bit/<split>/<city>/<name>_leftImg8bit.png`` and
``root/gtFine/<split>/<city>/<name>_gtFine_{instanceIds,labelIds,color}.png`` / ``..._polygons.json`` (gtCoarse
for ``mode='coarse'``). An item is ``(PIL RGB image, target)``: a PIL image per 'instance', 'semantic' or 'color'
target, the parsed JSON for 'polygon', a tuple when several are asked for.
"""
import json
import os
from collections import namedtuple

from .utils import extract_archive, iterable_to_str, verify_str_arg
from .vision import VisionDataset

__all__ = ['Cityscapes']


class Cityscapes(VisionDataset):
    CityscapesClass = namedtuple('CityscapesClass', ['name', 'id', 'train_id', 'category', 'category_id',
                                                     'has_instances', 'ignore_in_eval', 'color'])

    def __init__(self, root, split='train', mode='fine', target_type='instance', transform=None,
                 target_transform=None, transforms=None):
        super().__init__(root, transforms, transform, target_transform)
        self.mode = 'gtFine' if mode == 'fine' else 'gtCoarse'
        self.images_dir = os.path.join(self.root, 'leftImg8bit', split)
        self.targets_dir = os.path.join(self.root, self.mode, split)
        self.target_type, self.split, self.images, self.targets = target_type, split, [], []
        verify_str_arg(mode, 'mode', ('fine', 'coarse'))
        valid_modes = ('train', 'test', 'val') if mode == 'fine' else ('train', 'train_extra', 'val')
        msg = (f"Unknown value '{split}' for argument split if mode is '{mode}'. Valid values are "
               f"{{{iterable_to_str(valid_modes)}}}.")
        verify_str_arg(split, 'split', valid_modes, msg)
        if not isinstance(target_type, list):
            self.target_type = [target_type]
        for value in self.target_type:
            verify_str_arg(value, 'target_type', ('instance', 'semantic', 'polygon', 'color'))
        if not os.path.isdir(self.images_dir) or not os.path.isdir(self.targets_dir):
            self._extract_zips(split)
        for city in os.listdir(self.images_dir):
            img_dir, target_dir = os.path.join(self.images_dir, city), os.path.join(self.targets_dir, city)
            for file_name in os.listdir(img_dir):
                stem = file_name.split('_leftImg8bit')[0]
                self.targets.append([os.path.join(target_dir, f'{stem}_{self._get_target_suffix(self.mode, t)}')
                                     for t in self.target_type])
                self.images.append(os.path.join(img_dir, file_name))

    def _extract_zips(self, split):
        """torchvision's fallback: unpack the published zips when they are in ``root``."""
        image_dir_zip = os.path.join(self.root, 'leftImg8bit_trainvaltest.zip')
        if split == 'train_extra':
            image_dir_zip = os.path.join(self.root, 'leftImg8bit_trainextra.zip')
        target_dir_zip = os.path.join(self.root, f"{self.mode}{'_trainvaltest' if self.mode == 'gtFine' else ''}.zip")
        if os.path.isfile(image_dir_zip) and os.path.isfile(target_dir_zip):
            extract_archive(from_path=image_dir_zip, to_path=self.root)
            extract_archive(from_path=target_dir_zip, to_path=self.root)
        else:
            raise RuntimeError('Dataset not found or incomplete. Please make sure all required folders for the '
                               'specified "split" and "mode" are inside the "root" directory')

    def __getitem__(self, index):
        from .._pil import pil_image
        image = pil_image().open(self.images[index]).convert('RGB')
        targets = []
        for i, t in enumerate(self.target_type):
            if t == 'polygon':
                targets.append(self._load_json(self.targets[index][i]))
            else:
                targets.append(pil_image().open(self.targets[index][i]))
        target = tuple(targets) if len(targets) > 1 else targets[0]
        if self.transforms is not None:
            image, target = self.transforms(image, target)
        return image, target

    def __len__(self):
        return len(self.images)

    def extra_repr(self):
        return '\n'.join(['Split: {split}', 'Mode: {mode}', 'Type: {target_type}']).format(**self.__dict__)

    def _load_json(self, path):
        with open(path) as file:
            return json.load(file)

    def _get_target_suffix(self, mode, target_type):
        return {'instance': f'{mode}_instanceIds.png', 'semantic': f'{mode}_labelIds.png',
                'color': f'{mode}_color.png'}.get(target_type, f'{mode}_polygons.json')
