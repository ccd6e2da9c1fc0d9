"""Omniglot: handwritten characters of 50 alphabets, one folder per character.

Layout as torchvision: ``root/omniglot-py/images_background/<alphabet>/<character>/<image>.png`` (and
``images_evaluation`` for the evaluation alphabets). The classes are the characters, alphabets in sorted order
and characters in directory order (torchvision lists them unsorted, so does this). An item is ``(PIL image in
mode 'L', character index)``. The zip torchvision downloads (``images_background.zip``) is extracted when it is
present and the folder is not; ember.vision does not download it.
"""
import os

from .utils import extract_archive, list_dir, list_files
from .vision import VisionDataset, missing_files_error

__all__ = ['Omniglot']


class Omniglot(VisionDataset):
    """``Omniglot(root, background=True)``: the background (training) alphabets, or the evaluation ones."""
    folder = 'omniglot-py'
    download_url_prefix = 'https://raw.githubusercontent.com/brendenlake/omniglot/master/python'
    zips_md5 = {'images_background': '68d2efa1b9178cc56df9314c21c6e718',
                'images_evaluation': '6b91aef0f799c5bb55b94e3f2daec811'}

    def __init__(self, root, background=True, transform=None, target_transform=None, download=False):
        super().__init__(os.path.join(root, self.folder), transform=transform, target_transform=target_transform)
        self.background = background
        if download or not self._check_integrity():
            self.download()
        self.target_folder = os.path.join(self.root, self._get_target_folder())
        self._alphabets = sorted(list_dir(self.target_folder))
        self._characters = sum(([os.path.join(a, c) for c in list_dir(os.path.join(self.target_folder, a))]
                                for a in self._alphabets), [])
        self._character_images = [[(image, idx) for image in list_files(os.path.join(self.target_folder, c), '.png')]
                                  for idx, c in enumerate(self._characters)]
        self._flat_character_images = sum(self._character_images, [])

    def __len__(self):
        return len(self._flat_character_images)

    def __getitem__(self, index):
        from .._pil import pil_image
        image_name, character_class = self._flat_character_images[index]
        path = os.path.join(self.target_folder, self._characters[character_class], image_name)
        image = pil_image().open(path, mode='r').convert('L')
        if self.transform:
            image = self.transform(image)
        if self.target_transform:
            character_class = self.target_transform(character_class)
        return image, character_class

    def _get_target_folder(self):
        return 'images_background' if self.background else 'images_evaluation'

    def _check_integrity(self):
        return os.path.isdir(os.path.join(self.root, self._get_target_folder()))

    def download(self):
        """Extract the zip when it is in ``root/omniglot-py`` and the folder is not; else say what to put there."""
        if self._check_integrity():
            return
        name = self._get_target_folder()
        archive = os.path.join(self.root, name + '.zip')
        if os.path.isfile(archive):
            extract_archive(archive, self.root)
            return
        raise missing_files_error('Omniglot', self.root, [name + '/', name + '.zip (or)'],
                                  [f'{self.download_url_prefix}/{name}.zip'])
