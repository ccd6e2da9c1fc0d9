"""Pascal VOC: segmentation masks and detection annotations, 2007-2012.

Layout as torchvision: ``root/VOCdevkit/VOC<year>/`` (2011: ``root/TrainVal/VOCdevkit/VOC2011``) holding
``JPEGImages/<id>.jpg``, ``ImageSets/Segmentation/<image_set>.txt`` and ``SegmentationClass/<id>.png`` (for
VOCSegmentation), ``ImageSets/Main/<image_set>.txt`` and ``Annotations/<id>.xml`` (for VOCDetection). An item
is ``(PIL RGB image, PIL mask)`` or ``(PIL RGB image, annotation dict)``: the XML as nested dicts, as torchvision
parses it (``{'annotation': {'filename': ..., 'object': [{'name': ..., 'bndbox': {...}}, ...]}}``).
"""
import collections
import os
from xml.etree.ElementTree import Element as ET_Element, parse as ET_parse

from .utils import verify_str_arg
from .vision import VisionDataset, missing_files_error

__all__ = ['VOCSegmentation', 'VOCDetection']

DATASET_YEAR_DICT = {
    '2012': {'url': 'http://host.robots.ox.ac.uk/pascal/VOC/voc2012/VOCtrainval_11-May-2012.tar',
             'base_dir': os.path.join('VOCdevkit', 'VOC2012')},
    '2011': {'url': 'http://host.robots.ox.ac.uk/pascal/VOC/voc2011/VOCtrainval_25-May-2011.tar',
             'base_dir': os.path.join('TrainVal', 'VOCdevkit', 'VOC2011')},
    '2010': {'url': 'http://host.robots.ox.ac.uk/pascal/VOC/voc2010/VOCtrainval_03-May-2010.tar',
             'base_dir': os.path.join('VOCdevkit', 'VOC2010')},
    '2009': {'url': 'http://host.robots.ox.ac.uk/pascal/VOC/voc2009/VOCtrainval_11-May-2009.tar',
             'base_dir': os.path.join('VOCdevkit', 'VOC2009')},
    '2008': {'url': 'http://host.robots.ox.ac.uk/pascal/VOC/voc2008/VOCtrainval_14-Jul-2008.tar',
             'base_dir': os.path.join('VOCdevkit', 'VOC2008')},
    '2007': {'url': 'http://host.robots.ox.ac.uk/pascal/VOC/voc2007/VOCtrainval_06-Nov-2007.tar',
             'base_dir': os.path.join('VOCdevkit', 'VOC2007')},
    '2007-test': {'url': 'http://host.robots.ox.ac.uk/pascal/VOC/voc2007/VOCtest_06-Nov-2007.tar',
                  'base_dir': os.path.join('VOCdevkit', 'VOC2007')},
}


class _VOCBase(VisionDataset):
    _SPLITS_DIR = _TARGET_DIR = _TARGET_FILE_EXT = None

    def __init__(self, root, year='2012', image_set='train', download=False, transform=None, target_transform=None,
                 transforms=None):
        super().__init__(root, transforms, transform, target_transform)
        self.year = verify_str_arg(year, 'year', valid_values=[str(y) for y in range(2007, 2013)])
        valid_image_sets = ['train', 'trainval', 'val'] + (['test'] if year == '2007' else [])
        self.image_set = verify_str_arg(image_set, 'image_set', valid_image_sets)
        key = '2007-test' if year == '2007' and image_set == 'test' else year
        self.url = DATASET_YEAR_DICT[key]['url']
        voc_root = os.path.join(self.root, DATASET_YEAR_DICT[key]['base_dir'])
        if not os.path.isdir(voc_root):
            raise missing_files_error(type(self).__name__, self.root, [DATASET_YEAR_DICT[key]['base_dir'] + '/'],
                                      [self.url + ' (extract into root)'])
        split_f = os.path.join(voc_root, 'ImageSets', self._SPLITS_DIR, image_set.rstrip('\n') + '.txt')
        with open(split_f) as f:
            file_names = [x.strip() for x in f.readlines()]
        self.images = [os.path.join(voc_root, 'JPEGImages', x + '.jpg') for x in file_names]
        self.targets = [os.path.join(voc_root, self._TARGET_DIR, x + self._TARGET_FILE_EXT) for x in file_names]
        if len(self.images) != len(self.targets):
            raise AssertionError(f"Number of images ({len(self.images)}) != number of targets ({len(self.targets)})")

    def __len__(self):
        return len(self.images)


class VOCSegmentation(_VOCBase):
    """``VOCSegmentation(root, year='2012', image_set='train')``: items ``(image, mask)``."""
    _SPLITS_DIR, _TARGET_DIR, _TARGET_FILE_EXT = 'Segmentation', 'SegmentationClass', '.png'

    @property
    def masks(self):
        return self.targets

    def __getitem__(self, index):
        from .._pil import pil_image
        img = pil_image().open(self.images[index]).convert('RGB')
        target = pil_image().open(self.masks[index])
        if self.transforms is not None:
            img, target = self.transforms(img, target)
        return img, target


class VOCDetection(_VOCBase):
    """``VOCDetection(root, year='2012', image_set='train')``: items ``(image, annotation dict)``."""
    _SPLITS_DIR, _TARGET_DIR, _TARGET_FILE_EXT = 'Main', 'Annotations', '.xml'

    @property
    def annotations(self):
        return self.targets

    def __getitem__(self, index):
        from .._pil import pil_image
        img = pil_image().open(self.images[index]).convert('RGB')
        target = self.parse_voc_xml(ET_parse(self.annotations[index]).getroot())
        if self.transforms is not None:
            img, target = self.transforms(img, target)
        return img, target

    @staticmethod
    def parse_voc_xml(node: ET_Element):
        """An XML element as nested dicts: a leaf is its text, repeated children a list; ``object`` is always
        a list under ``annotation``."""
        voc_dict = {}
        children = list(node)
        if children:
            def_dic = collections.defaultdict(list)
            for dc in map(VOCDetection.parse_voc_xml, children):
                for ind, v in dc.items():
                    def_dic[ind].append(v)
            if node.tag == 'annotation':
                def_dic['object'] = [def_dic['object']]
            voc_dict = {node.tag: {ind: v[0] if len(v) == 1 else v for ind, v in def_dic.items()}}
        if node.text:
            text = node.text.strip()
            if not children:
                voc_dict[node.tag] = text
        return voc_dict
