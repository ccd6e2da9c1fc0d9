"""MS COCO detection and captions: images in a folder and one JSON annotation file, read through pycocotools'
``COCO`` index, as torchvision (pycocotools is needed, imported when a dataset is made).

``CocoDetection(root, annFile)``: items ``(PIL RGB image, list of annotation dicts)`` in increasing image id;
``CocoCaptions``: ``(PIL RGB image, list of caption strings)``.
"""
import os

from .vision import VisionDataset

__all__ = ['CocoDetection', 'CocoCaptions']


class CocoDetection(VisionDataset):
    """``root`` holds the images named by the annotations' ``file_name``; ``annFile`` is the JSON file."""

    def __init__(self, root, annFile, transform=None, target_transform=None, transforms=None):
        super().__init__(root, transforms, transform, target_transform)
        from pycocotools.coco import COCO
        self.coco = COCO(annFile)
        self.ids = list(sorted(self.coco.imgs.keys()))

    def _load_image(self, id):
        from .._pil import pil_image
        path = self.coco.loadImgs(id)[0]['file_name']
        return pil_image().open(os.path.join(self.root, path)).convert('RGB')

    def _load_target(self, id):
        return self.coco.loadAnns(self.coco.getAnnIds(id))

    def __getitem__(self, index):
        if not isinstance(index, int):
            raise ValueError(f"Index must be of type integer, got {type(index)} instead.")
        id = self.ids[index]
        image, target = self._load_image(id), self._load_target(id)
        if self.transforms is not None:
            image, target = self.transforms(image, target)
        return image, target

    def __len__(self):
        return len(self.ids)


class CocoCaptions(CocoDetection):
    """Items ``(image, [caption, ...])``."""

    def _load_target(self, id):
        return [ann['caption'] for ann in super()._load_target(id)]
