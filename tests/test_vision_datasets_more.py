"""The torchvision datasets ember.vision reads from their published on-disk layouts, on tiny fake copies built in
tmp_path (torchvision is not installed here: the checks are its documented behaviour: lengths, sample types,
targets), torchvision.datasets.utils, StandardTransform and models.feature_extraction."""
import bz2
import gzip
import hashlib
import io
import json
import os
import tarfile
import zipfile

import numpy as np
import pytest

import ember
from ember.vision import datasets as D
from ember.vision.datasets import utils as U

PIL = pytest.importorskip('PIL.Image')


def _png(path, arr, mode=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    PIL.fromarray(arr, mode=mode).save(path)


# --- datasets.utils --------------------------------------------------------------------------------------------

def test_verify_str_arg_and_iterable_to_str():
    assert U.verify_str_arg('a', 'x', ('a', 'b')) == 'a'
    with pytest.raises(ValueError, match=r"^Unknown value 'c' for argument x. Valid values are \{'a', 'b'\}.$"):
        U.verify_str_arg('c', 'x', ('a', 'b'))
    with pytest.raises(ValueError, match=r"^Expected type str for argument x, but got type <class 'int'>.$"):
        U.verify_str_arg(1, 'x')
    with pytest.raises(ValueError, match='^custom$'):
        U.verify_str_arg('c', 'x', ('a',), custom_msg='custom')


def test_integrity_download_and_extract(tmp_path):
    src = tmp_path / 'src'
    src.mkdir()
    (src / 'a.txt').write_text('hello')
    with tarfile.open(src / 'arch.tar.gz', 'w:gz') as tar:
        tar.add(src / 'a.txt', arcname='inner/a.txt')
    with zipfile.ZipFile(src / 'arch.zip', 'w') as z:
        z.write(src / 'a.txt', arcname='z/a.txt')
    with gzip.open(src / 'single.txt.gz', 'wb') as f:
        f.write(b'gz data')
    md5 = hashlib.md5((src / 'arch.tar.gz').read_bytes()).hexdigest()
    assert U.check_integrity(str(src / 'arch.tar.gz'), md5) and not U.check_integrity(str(src / 'arch.tar.gz'), '0' * 32)
    assert not U.check_integrity(str(src / 'absent'))
    # a file:// URL downloads without a network, through the same urllib path as http
    U.download_and_extract_archive((src / 'arch.tar.gz').as_uri(), str(tmp_path / 'dl'), md5=md5)
    assert (tmp_path / 'dl' / 'inner' / 'a.txt').read_text() == 'hello'
    with pytest.raises(RuntimeError, match='File not found or corrupted'):
        U.download_url((src / 'a.txt').as_uri(), str(tmp_path / 'dl2'), md5='0' * 32)
    out = U.extract_archive(str(src / 'arch.zip'), str(tmp_path / 'x'))
    assert out == str(tmp_path / 'x') and (tmp_path / 'x' / 'z' / 'a.txt').read_text() == 'hello'
    (tmp_path / 'y').mkdir()        # a single file is decompressed into an existing folder (as torchvision)
    out = U.extract_archive(str(src / 'single.txt.gz'), str(tmp_path / 'y'))
    assert out == str(tmp_path / 'y' / 'single.txt') and open(out, 'rb').read() == b'gz data'
    assert U._detect_file_type('a.tar.bz2') == ('.tar.bz2', '.tar', '.bz2') and U._detect_file_type('a.tgz') == \
        ('.tgz', '.tar', '.gz')
    with pytest.raises(RuntimeError, match="Unknown compression or archive type: '.rar'"):
        U.extract_archive(str(src / 'x.rar'))
    assert sorted(U.list_files(str(src), '.zip')) == ['arch.zip'] and U.list_dir(str(tmp_path / 'dl')) == ['inner']


def test_standard_transform():
    t = D.StandardTransform(lambda x: x + 1, None)
    assert t(1, 'y') == (2, 'y')
    ds = D.FakeData(size=2, transform=ember.vision.transforms.ToTensor())
    r = repr(ds.transforms).splitlines()
    assert r[0] == 'StandardTransform' and r[1] == 'Transform: ToTensor()'


# --- datasets --------------------------------------------------------------------------------------------------

def test_omniglot(tmp_path):
    base = tmp_path / 'omniglot-py' / 'images_background'
    for a, chars in (('Bravo', ('character01', 'character02')), ('Alpha', ('character01',))):
        for c in chars:
            for k in range(2):
                _png(str(base / a / c / f'{a}{c}_{k}.png'), np.full((4, 4), 255 * k, np.uint8))
    ds = D.Omniglot(str(tmp_path), background=True)
    assert len(ds) == 6 and ds.root == os.path.join(str(tmp_path), 'omniglot-py')
    img, target = ds[0]
    assert img.mode == 'L' and img.size == (4, 4) and target == 0
    assert ds._characters[0].startswith('Alpha') and sorted(t for _, t in ds._flat_character_images) == [0, 0, 1, 1, 2, 2]
    from ember.vision.datasets.omniglot import Omniglot
    assert Omniglot is D.Omniglot
    with pytest.raises(RuntimeError, match='images_evaluation'):
        D.Omniglot(str(tmp_path), background=False)


def test_svhn(tmp_path):
    sio = pytest.importorskip('scipy.io')
    X = np.arange(32 * 32 * 3 * 3, dtype=np.uint8).reshape(32, 32, 3, 3)
    sio.savemat(str(tmp_path / 'test_32x32.mat'), {'X': X, 'y': np.array([[10], [3], [1]], dtype=np.uint8)})
    ds = D.SVHN(str(tmp_path), split='test')
    assert len(ds) == 3 and ds.labels.tolist() == [0, 3, 1]
    img, target = ds[1]
    assert img.mode == 'RGB' and img.size == (32, 32) and target == 3
    np.testing.assert_array_equal(np.asarray(img), X[:, :, :, 1])
    with pytest.raises(ValueError, match="Unknown value 'bad' for argument split"):
        D.SVHN(str(tmp_path), split='bad')
    with pytest.raises(RuntimeError, match='train_32x32.mat'):
        D.SVHN(str(tmp_path), split='train')


def test_usps(tmp_path):
    rows = []
    for label, v in ((1, -1.0), (10, 1.0)):
        rows.append(f'{label} ' + ' '.join(f'{i + 1}:{v}' for i in range(256)))
    with bz2.open(tmp_path / 'usps.t.bz2', 'wb') as f:
        f.write(('\n'.join(rows) + '\n').encode())
    ds = D.USPS(str(tmp_path), train=False)
    assert len(ds) == 2 and ds.targets == [0, 9]
    img, target = ds[1]
    assert img.mode == 'L' and img.size == (16, 16) and target == 9 and np.asarray(img).max() == 255
    assert np.asarray(ds[0][0]).max() == 0


def test_stl10(tmp_path):
    folder = tmp_path / 'stl10_binary'
    folder.mkdir()
    rng = np.random.default_rng(0)
    imgs = {n: rng.integers(0, 255, (k, 3, 96, 96), dtype=np.uint8) for n, k in (('train', 4), ('test', 2),
                                                                               ('unlabeled', 3))}
    for n, arr in imgs.items():
        np.transpose(arr, (0, 1, 3, 2)).tofile(folder / f'{n}_X.bin')     # stored column-major
    np.array([1, 2, 3, 10], np.uint8).tofile(folder / 'train_y.bin')
    np.array([5, 6], np.uint8).tofile(folder / 'test_y.bin')
    (folder / 'class_names.txt').write_text('\n'.join(f'c{i}' for i in range(10)) + '\n')
    (folder / 'fold_indices.txt').write_text('\n'.join('0 2' if i == 0 else '1 3' for i in range(10)) + '\n')
    ds = D.STL10(str(tmp_path), split='train')
    assert len(ds) == 4 and ds.labels.tolist() == [0, 1, 2, 9] and ds.classes[0] == 'c0'
    img, target = ds[3]
    assert img.mode == 'RGB' and img.size == (96, 96) and target == 9
    np.testing.assert_array_equal(np.asarray(img), np.transpose(imgs['train'][3], (1, 2, 0)))
    assert D.STL10(str(tmp_path), split='train', folds=0).labels.tolist() == [0, 2]
    both = D.STL10(str(tmp_path), split='train+unlabeled')
    assert len(both) == 7 and both.labels.tolist()[-3:] == [-1, -1, -1]
    assert D.STL10(str(tmp_path), split='unlabeled')[0][1] == -1 and len(D.STL10(str(tmp_path), split='test')) == 2
    with pytest.raises(ValueError, match=r'range \[0, 10\)'):
        D.STL10(str(tmp_path), folds=10)


def _idx(path, arr, code):
    header = (code << 8 | arr.ndim).to_bytes(4, 'big') + b''.join(s.to_bytes(4, 'big') for s in arr.shape)
    with open(path, 'wb') as f:
        f.write(header + arr.astype(arr.dtype.newbyteorder('>')).tobytes())


def test_qmnist(tmp_path):
    raw = tmp_path / 'QMNIST' / 'raw'
    raw.mkdir(parents=True)
    imgs = np.arange(3 * 28 * 28, dtype=np.uint32).reshape(3, 28, 28).astype(np.uint8)
    labels = np.array([[7, 1, 2, 3, 4, 5, 6, 0], [2] * 8, [9] * 8], dtype=np.int32)
    _idx(raw / 'qmnist-test-images-idx3-ubyte', imgs, 8)
    _idx(raw / 'qmnist-test-labels-idx2-int', labels, 12)
    ds = D.QMNIST(str(tmp_path), what='test')
    assert len(ds) == 3 and ds.targets.shape == (3, 8) and ds.targets.dtype == ember.int64
    img, target = ds[0]
    assert img.mode == 'L' and target == 7
    np.testing.assert_array_equal(np.asarray(img), imgs[0])
    full = D.QMNIST(str(tmp_path), what='test', compat=False)[0][1]
    assert full.tolist() == labels[0].tolist()
    assert len(D.QMNIST(str(tmp_path), what='test10k')) == 3 and len(D.QMNIST(str(tmp_path), what='test50k')) == 0
    with pytest.raises(ValueError, match="Unknown value 'x' for argument what"):
        D.QMNIST(str(tmp_path), what='x')


def test_voc(tmp_path):
    voc = tmp_path / 'VOCdevkit' / 'VOC2012'
    for d in ('JPEGImages', 'SegmentationClass', 'Annotations', 'ImageSets/Segmentation', 'ImageSets/Main'):
        (voc / d).mkdir(parents=True)
    for i in ('a', 'b'):
        PIL.fromarray(np.zeros((5, 6, 3), np.uint8)).save(voc / 'JPEGImages' / f'{i}.jpg')
        PIL.fromarray(np.ones((5, 6), np.uint8)).save(voc / 'SegmentationClass' / f'{i}.png')
        (voc / 'Annotations' / f'{i}.xml').write_text(
            f'<annotation><filename>{i}.jpg</filename><size><width>6</width></size>'
            '<object><name>dog</name><bndbox><xmin>1</xmin></bndbox></object></annotation>')
    (voc / 'ImageSets' / 'Segmentation' / 'train.txt').write_text('a\nb\n')
    (voc / 'ImageSets' / 'Main' / 'val.txt').write_text('b\n')
    seg = D.VOCSegmentation(str(tmp_path), year='2012', image_set='train')
    img, mask = seg[1]
    assert len(seg) == 2 and img.mode == 'RGB' and img.size == (6, 5) and np.asarray(mask).max() == 1
    det = D.VOCDetection(str(tmp_path), year='2012', image_set='val')
    img, ann = det[0]
    assert len(det) == 1 and ann == {'annotation': {'filename': 'b.jpg', 'size': {'width': '6'},
                                                    'object': [{'name': 'dog', 'bndbox': {'xmin': '1'}}]}}
    with pytest.raises(ValueError, match="Unknown value 'test' for argument image_set"):
        D.VOCSegmentation(str(tmp_path), year='2012', image_set='test')
    with pytest.raises(RuntimeError, match='VOC2010'):
        D.VOCSegmentation(str(tmp_path), year='2010')


def test_coco_needs_pycocotools(tmp_path):
    try:
        import pycocotools  # noqa: F401
    except ModuleNotFoundError:
        with pytest.raises(ModuleNotFoundError, match='pycocotools'):
            D.CocoDetection(str(tmp_path), str(tmp_path / 'ann.json'))
        return
    (tmp_path / 'ann.json').write_text(json.dumps({
        'images': [{'id': 2, 'file_name': 'b.jpg'}, {'id': 1, 'file_name': 'a.jpg'}],
        'annotations': [{'id': 5, 'image_id': 1, 'caption': 'a cat', 'bbox': [0, 0, 1, 1], 'category_id': 1}],
        'categories': [{'id': 1, 'name': 'cat'}]}))
    for n in ('a', 'b'):
        PIL.fromarray(np.zeros((2, 2, 3), np.uint8)).save(tmp_path / f'{n}.jpg')
    ds = D.CocoCaptions(str(tmp_path), str(tmp_path / 'ann.json'))
    assert len(ds) == 2 and ds.ids == [1, 2] and ds[0][1] == ['a cat'] and ds[1][1] == []


def test_celeba(tmp_path):
    base = tmp_path / 'celeba'
    (base / 'img_align_celeba').mkdir(parents=True)
    names = ['000001.jpg', '000002.jpg', '000003.jpg']
    for n in names:
        PIL.fromarray(np.zeros((4, 3, 3), np.uint8)).save(base / 'img_align_celeba' / n)
    (base / 'list_eval_partition.txt').write_text('000001.jpg 0\n000002.jpg 1\n000003.jpg 0\n')
    (base / 'identity_CelebA.txt').write_text('000001.jpg 10\n000002.jpg 20\n000003.jpg 30\n')
    (base / 'list_attr_celeba.txt').write_text('3\nSmiling Young\n000001.jpg  1 -1\n000002.jpg -1 -1\n000003.jpg -1  1\n')
    (base / 'list_bbox_celeba.txt').write_text('3\nimage_id x_1 y_1 width height\n'
                                              '000001.jpg 1 2 3 4\n000002.jpg 5 6 7 8\n000003.jpg 9 10 11 12\n')
    (base / 'list_landmarks_align_celeba.txt').write_text('3\nlefteye_x lefteye_y\n000001.jpg 1 1\n'
                                                          '000002.jpg 2 2\n000003.jpg 3 3\n')
    ds = D.CelebA(str(tmp_path), split='train', target_type=['attr', 'identity', 'bbox'])
    assert len(ds) == 2 and ds.filename == ['000001.jpg', '000003.jpg'] and ds.attr_names == ['Smiling', 'Young']
    img, (attr, identity, bbox) = ds[1]
    assert attr.tolist() == [0, 1] and identity.item() == 30 and identity.ndim == 0 and bbox.tolist() == [9, 10, 11, 12]
    assert len(D.CelebA(str(tmp_path), split='all')) == 3
    assert D.CelebA(str(tmp_path), split='valid', target_type='landmarks')[0][1].tolist() == [2, 2]
    assert D.CelebA(str(tmp_path), split='test', target_type=[]).__len__() == 0
    with pytest.raises(RuntimeError, match='target_transform is specified but target_type is empty'):
        D.CelebA(str(tmp_path), target_type=[], target_transform=lambda t: t)


def test_cityscapes_flickr_sbu(tmp_path):
    city = tmp_path / 'cs'
    _png(str(city / 'leftImg8bit' / 'val' / 'ulm' / 'ulm_000001_leftImg8bit.png'), np.zeros((2, 2, 3), np.uint8))
    _png(str(city / 'gtFine' / 'val' / 'ulm' / 'ulm_000001_gtFine_labelIds.png'), np.full((2, 2), 7, np.uint8))
    (city / 'gtFine' / 'val' / 'ulm' / 'ulm_000001_gtFine_polygons.json').write_text('{"objects": []}')
    ds = D.Cityscapes(str(city), split='val', target_type=['semantic', 'polygon'])
    img, (sem, poly) = ds[0]
    assert len(ds) == 1 and np.asarray(sem).max() == 7 and poly == {'objects': []}
    with pytest.raises(ValueError, match="for argument split if mode is 'fine'"):
        D.Cityscapes(str(city), split='train_extra')
    f30 = tmp_path / 'f30'
    _png(str(f30 / '1.jpg'), np.zeros((2, 2, 3), np.uint8))
    (f30 / 'tok.txt').write_text('1.jpg#0\tA dog.\n1.jpg#1\tA brown dog.\n')
    ds = D.Flickr30k(str(f30), str(f30 / 'tok.txt'))
    assert len(ds) == 1 and ds[0][1] == ['A dog.', 'A brown dog.']
    f8 = tmp_path / 'f8'
    _png(str(f8 / '1000_abc.jpg'), np.zeros((2, 2, 3), np.uint8))
    (f8 / 'ann.html').write_text('<table><tr><td><a href="x">http://flickr.com/photos/1000/</a></td>'
                                 '<td><ul><li>cap one</li><li>cap two</li></ul></td></tr></table>')
    ds = D.Flickr8k(str(f8), str(f8 / 'ann.html'))
    assert len(ds) == 1 and ds[0][1] == ['cap one', 'cap two'] and ds[0][0].mode == 'RGB'
    sbu = tmp_path / 'sbu' / 'dataset'
    sbu.mkdir(parents=True)
    (sbu / 'SBU_captioned_photo_dataset_urls.txt').write_text('http://x/p1.jpg\nhttp://x/p2.jpg\n')
    (sbu / 'SBU_captioned_photo_dataset_captions.txt').write_text('first\nsecond\n')
    _png(str(sbu / 'p2.jpg'), np.zeros((2, 2, 3), np.uint8))
    ds = D.SBU(str(tmp_path / 'sbu'))
    assert len(ds) == 1 and ds[0][1] == 'second'


def test_sbd_phototour_lsun_video(tmp_path):
    sio = pytest.importorskip('scipy.io')
    import scipy.sparse as sp
    root = tmp_path / 'sbd'
    _png(str(root / 'img' / 'x.jpg'), np.zeros((3, 4, 3), np.uint8))
    (root / 'cls').mkdir()
    seg = np.arange(12, dtype=np.uint8).reshape(3, 4)
    bounds = np.empty((20, 1), dtype=object)
    for i in range(20):
        bounds[i, 0] = sp.csc_matrix((np.eye(3, 4) * (i % 2)).astype(np.uint8))
    gt = np.array([(seg, bounds)], dtype=[('Segmentation', object), ('Boundaries', object)])
    sio.savemat(str(root / 'cls' / 'x.mat'), {'GTcls': gt})
    (root / 'train.txt').write_text('x\n')
    img, target = D.SBDataset(str(root), mode='segmentation')[0]
    np.testing.assert_array_equal(np.asarray(target), seg)
    img, target = D.SBDataset(str(root), mode='boundaries')[0]
    assert target.shape == (20, 3, 4) and target[1].sum() == 3 and target[0].sum() == 0
    pt = tmp_path / 'pt' / 'liberty'
    pt.mkdir(parents=True)
    sheet = np.arange(128 * 128, dtype=np.uint32).reshape(128, 128).astype(np.uint8)
    PIL.fromarray(sheet).save(pt / 'patches0000.bmp')
    (pt / 'info.txt').write_text('0 0\n0 0\n1 0\n2 0\n')
    (pt / 'm50_100000_100000_0.txt').write_text('0 0 0 1 0 0 0\n2 1 0 3 2 0 0\n')
    orig = D.PhotoTour.lens['liberty']
    ds = D.PhotoTour(str(tmp_path / 'pt'), 'liberty', train=True)
    assert orig == D.PhotoTour.lens['liberty'] and len(ds) == 4 and ds[1].shape == (64, 64) and ds[1].dtype == ember.uint8
    np.testing.assert_array_equal(ds[1].numpy(), sheet[0:64, 64:128])
    test = D.PhotoTour(str(tmp_path / 'pt'), 'liberty', train=False)      # from the cached .pt now
    assert len(test) == 2 and test[0][2].item() == 1 and test[1][2].item() == 0
    try:
        import lmdb  # noqa: F401
    except ModuleNotFoundError:
        with pytest.raises(ModuleNotFoundError, match='lmdb'):
            D.LSUN(str(tmp_path), classes=['bedroom_train'])
    with pytest.raises(ValueError, match="Unknown value 'attic' for LSUN class"):
        D.LSUN.__new__(D.LSUN)._verify_classes(['attic_train'])
    with pytest.raises(RuntimeError, match='cannot decode videos'):
        D.HMDB51(str(tmp_path), str(tmp_path), 8)


# --- models.feature_extraction ---------------------------------------------------------------------------------

def test_feature_extraction_names_and_outputs():
    from ember.vision.models.feature_extraction import create_feature_extractor, get_graph_node_names
    m = ember.vision.models.resnet18()
    train, ev = get_graph_node_names(m)
    # torchvision's documented names for resnet18: module paths, with the ops inside a block named after them
    assert train == ev and train[:12] == ['x', 'conv1', 'bn1', 'relu', 'maxpool', 'layer1.0.conv1', 'layer1.0.bn1',
                                          'layer1.0.relu', 'layer1.0.conv2', 'layer1.0.bn2', 'layer1.0.add',
                                          'layer1.0.relu_1']
    assert train[-3:] == ['avgpool', 'flatten', 'fc']
    fe = create_feature_extractor(m, return_nodes={'layer1': 'f1', 'layer4.1.relu_1': 'f4', 'flatten': 'flat'})
    m.eval()
    fe.eval()
    x = ember.randn(1, 3, 64, 64)
    out = fe(x)
    assert list(out) == ['f1', 'f4', 'flat'] and tuple(out['f1'].shape) == (1, 64, 16, 16)
    np.testing.assert_allclose(out['flat'].detach().numpy(),
                               ember.flatten(m.avgpool(m.layer4(m.layer3(m.layer2(m.layer1(m.maxpool(
                                   m.relu(m.bn1(m.conv1(x))))))))), 1).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert fe.graph is fe.eval_graph and not hasattr(fe, 'fc')
    with pytest.raises(ValueError, match="node: 'nope' is not present in model"):
        create_feature_extractor(m, return_nodes=['nope'])
    with pytest.raises(ValueError, match='Either `return_nodes`'):
        create_feature_extractor(m)
