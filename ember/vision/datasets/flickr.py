"""Flickr8k and Flickr30k: images with five captions each.

``Flickr8k(root, ann_file)``: ``root`` holds the images (``<id>_<hash>.jpg``), ``ann_file`` is the HTML page of
captions torchvision parses (a table: an ``<a>`` naming an image's URL, then its captions as ``<li>`` items).
``Flickr30k(root, ann_file)``: ``ann_file`` is the token file, lines ``<image>.jpg#<n>\\t<caption>``. Items are
``(PIL RGB image, list of captions)``, images in sorted order.
"""
import glob
import os
from collections import defaultdict
from html.parser import HTMLParser

from .vision import VisionDataset

__all__ = ['Flickr8k', 'Flickr30k']


class Flickr8kParser(HTMLParser):
    """Collects ``{image path: [captions]}`` from Flickr8k's caption page."""

    def __init__(self, root):
        super().__init__()
        self.root = root
        self.annotations = {}
        self.in_table = False
        self.current_tag = None
        self.current_img = None

    def handle_starttag(self, tag, attrs):
        self.current_tag = tag
        if tag == 'table':
            self.in_table = True

    def handle_endtag(self, tag):
        self.current_tag = None
        if tag == 'table':
            self.in_table = False

    def handle_data(self, data):
        if not self.in_table:
            return
        if data == 'Image Not Found':
            self.current_img = None
        elif self.current_tag == 'a':
            img_id = data.split('/')[-2]
            self.current_img = glob.glob(os.path.join(self.root, img_id + '_*.jpg'))[0]
            self.annotations[self.current_img] = []
        elif self.current_tag == 'li' and self.current_img:
            self.annotations[self.current_img].append(data.strip())


class _Captions(VisionDataset):
    def __getitem__(self, index):
        from .._pil import pil_image
        img_id = self.ids[index]
        img = pil_image().open(self._path(img_id)).convert('RGB')
        if self.transform is not None:
            img = self.transform(img)
        target = self.annotations[img_id]
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.ids)


class Flickr8k(_Captions):
    def __init__(self, root, ann_file, transform=None, target_transform=None):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.ann_file = os.path.expanduser(ann_file)
        parser = Flickr8kParser(self.root)
        with open(self.ann_file) as fh:
            parser.feed(fh.read())
        self.annotations = parser.annotations
        self.ids = list(sorted(self.annotations.keys()))

    def _path(self, img_id):
        return img_id


class Flickr30k(_Captions):
    def __init__(self, root, ann_file, transform=None, target_transform=None):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.ann_file = os.path.expanduser(ann_file)
        self.annotations = defaultdict(list)
        with open(self.ann_file) as fh:
            for line in fh:
                img_id, caption = line.strip().split('\t')
                self.annotations[img_id[:-2]].append(caption)
        self.ids = list(sorted(self.annotations.keys()))

    def _path(self, img_id):
        return os.path.join(self.root, img_id)
