"""SBU captioned photos: a list of Flickr URLs and their captions; the photos present are the dataset.

Layout as torchvision: ``root/dataset/SBU_captioned_photo_dataset_urls.txt`` and ``..._captions.txt`` (line by
line), and the photos as ``root/dataset/<basename of the URL>``. Items are ``(PIL RGB image, caption)``; URLs
whose photo is absent are skipped, as torchvision.
"""
import os

from .vision import VisionDataset, missing_files_error

__all__ = ['SBU']


class SBU(VisionDataset):
    url = 'https://www.cs.rice.edu/~vo9/sbucaptions/SBUCaptionedPhotoDataset.tar.gz'
    filename = 'SBUCaptionedPhotoDataset.tar.gz'
    _FILES = ('SBU_captioned_photo_dataset_urls.txt', 'SBU_captioned_photo_dataset_captions.txt')

    def __init__(self, root, transform=None, target_transform=None, download=True):
        super().__init__(root, transform=transform, target_transform=target_transform)
        folder = os.path.join(self.root, 'dataset')
        if not all(os.path.isfile(os.path.join(folder, f)) for f in self._FILES):
            raise missing_files_error('SBU', folder, list(self._FILES) + ['<the photos>'], [self.url])
        self.photos, self.captions = [], []
        with open(os.path.join(folder, self._FILES[0])) as f1, open(os.path.join(folder, self._FILES[1])) as f2:
            for line1, line2 in zip(f1, f2):
                photo = os.path.basename(line1.rstrip())
                if os.path.exists(os.path.join(folder, photo)):
                    self.photos.append(photo)
                    self.captions.append(line2.rstrip())

    def __getitem__(self, index):
        from .._pil import pil_image
        img = pil_image().open(os.path.join(self.root, 'dataset', self.photos[index])).convert('RGB')
        if self.transform is not None:
            img = self.transform(img)
        target = self.captions[index]
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.photos)
