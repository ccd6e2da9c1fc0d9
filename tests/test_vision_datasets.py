"""ember.vision.datasets: small files written here in each format's published layout, read back item by item."""
import gzip
import hashlib
import os
import pickle

import numpy as np
import pytest

import ember
from ember.vision import datasets, transforms

Image = pytest.importorskip('PIL.Image')


def _idx(arr, magic_type=0x08):
    header = (magic_type << 8 | arr.ndim).to_bytes(4, 'big') + b''.join(int(s).to_bytes(4, 'big') for s in arr.shape)
    return header + arr.astype(arr.dtype.newbyteorder('>')).tobytes()


def _write_mnist(root, cls='MNIST', n_train=5, n_test=3, gz=False, names=None):
    raw = os.path.join(root, cls, 'raw')
    os.makedirs(raw, exist_ok=True)
    rng = np.random.RandomState(0)
    out = {}
    for prefix, n in (('train', n_train), ('t10k', n_test)):
        imgs = rng.randint(0, 256, (n, 28, 28)).astype(np.uint8)
        labels = rng.randint(0, 10, n).astype(np.uint8)
        for kind, arr, d in (('images', imgs, 3), ('labels', labels, 1)):
            name = (names or {}).get((prefix, kind), f'{prefix}-{kind}-idx{d}-ubyte')
            data = _idx(arr)
            if gz:
                with gzip.open(os.path.join(raw, name + '.gz'), 'wb') as f:
                    f.write(data)
            else:
                with open(os.path.join(raw, name), 'wb') as f:
                    f.write(data)
        out[prefix] = (imgs, labels)
    return out


@pytest.mark.parametrize('cls', ['MNIST', 'FashionMNIST', 'KMNIST'])
@pytest.mark.parametrize('gz', [False, True])
def test_mnist_family_reads_idx_files(tmp_path, cls, gz):
    written = _write_mnist(str(tmp_path), cls, gz=gz)
    for train, prefix in ((True, 'train'), (False, 't10k')):
        ds = getattr(datasets, cls)(str(tmp_path), train=train, download=True)   # present: download is a no-op
        imgs, labels = written[prefix]
        assert len(ds) == len(imgs) and ds.data.dtype == ember.uint8 and ds.targets.dtype == ember.int64
        for i in range(len(ds)):
            img, target = ds[i]
            assert img.mode == 'L' and np.array_equal(np.array(img), imgs[i]) and target == int(labels[i])
            assert type(target) is int
    ds = getattr(datasets, cls)(str(tmp_path), transform=transforms.ToTensor(), target_transform=lambda t: t + 100)
    x, y = ds[1]
    np.testing.assert_allclose(x.numpy()[0], written['train'][0][1] / 255.0, atol=1e-6)
    assert y == int(written['train'][1][1]) + 100
    assert len(ds.classes) == 10 and 'Split: Train' in repr(ds)


def test_mnist_through_dataloader(tmp_path):
    _write_mnist(str(tmp_path), n_train=10)
    ds = datasets.MNIST(str(tmp_path), transform=transforms.Compose([transforms.ToTensor(),
                                                                     transforms.Normalize((0.1307,), (0.3081,))]))
    batches = list(ember.utils.data.DataLoader(ds, batch_size=4))
    assert [b[0].shape for b in batches] == [(4, 1, 28, 28), (4, 1, 28, 28), (2, 1, 28, 28)]
    assert batches[0][1].dtype == ember.int64


def test_mnist_missing_files_error_names_folder(tmp_path):
    for download in (False, True):
        with pytest.raises(RuntimeError, match=r'MNIST.raw.train-images-idx3-ubyte') as e:
            datasets.MNIST(str(tmp_path), download=download)
        assert 'does not download' in str(e.value)


def test_mnist_corrupt_and_truncated(tmp_path):
    _write_mnist(str(tmp_path))
    path = os.path.join(str(tmp_path), 'MNIST', 'raw', 'train-images-idx3-ubyte')
    data = open(path, 'rb').read()
    with open(path, 'wb') as f:
        f.write(data[:-10])
    with pytest.raises(RuntimeError, match='truncated or corrupt'):
        datasets.MNIST(str(tmp_path))
    with open(path, 'wb') as f:
        f.write(b'\x12\x34\x56\x78' + data[4:])
    with pytest.raises(RuntimeError, match='not an idx file'):
        datasets.MNIST(str(tmp_path))
    with open(path, 'wb') as f:
        f.write(data)
    lab = os.path.join(str(tmp_path), 'MNIST', 'raw', 'train-labels-idx1-ubyte')
    with open(lab, 'wb') as f:
        f.write(_idx(np.zeros(4, np.uint8)))      # 4 labels for 5 images
    with pytest.raises(RuntimeError, match='5 images but 4 labels'):
        datasets.MNIST(str(tmp_path))
    os.remove(lab)
    with open(lab + '.gz', 'wb') as f:
        f.write(b'not gzip at all')
    with pytest.raises(RuntimeError, match='not a valid gzip'):
        datasets.MNIST(str(tmp_path))


def test_emnist_split_files(tmp_path):
    names = {(p, k): f'emnist-letters-{"train" if p == "train" else "test"}-{k}-idx{3 if k == "images" else 1}-ubyte'
             for p in ('train', 't10k') for k in ('images', 'labels')}
    written = _write_mnist(str(tmp_path), 'EMNIST', names=names)
    ds = datasets.EMNIST(str(tmp_path), split='letters', train=False)
    assert ds.classes[0] == 'N/A' and len(ds.classes) == 27 and len(ds) == 3
    assert all(np.array_equal(np.array(ds[i][0]), written['t10k'][0][i]) for i in range(3))
    assert len(datasets.EMNIST.classes_split_dict['balanced']) == 47
    with pytest.raises(ValueError, match="Unknown value 'nope' for argument split"):
        datasets.EMNIST(str(tmp_path), split='nope')


def _write_cifar(root, folder, files, meta_name, meta_key, n=4, label_key='labels', protocol=pickle.HIGHEST_PROTOCOL):
    d = os.path.join(root, folder)
    os.makedirs(d, exist_ok=True)
    rng = np.random.RandomState(1)
    written = {}
    for name in files:
        data = rng.randint(0, 256, (n, 3072)).astype(np.uint8)
        labels = rng.randint(0, 10, n).tolist()
        with open(os.path.join(d, name), 'wb') as f:
            pickle.dump({'batch_label': 'x', label_key: labels, 'data': data,
                         'filenames': [b'a.png'] * n}, f, protocol=protocol)
        written[name] = (data, labels)
    with open(os.path.join(d, meta_name), 'wb') as f:
        pickle.dump({meta_key: [f'class{i}' for i in range(10)]}, f, protocol=protocol)
    md5 = {name: hashlib.md5(open(os.path.join(d, name), 'rb').read()).hexdigest() for name in
           list(files) + [meta_name]}
    return written, md5


@pytest.mark.parametrize('protocol', [2, pickle.HIGHEST_PROTOCOL])
def test_cifar10_reads_pickled_batches(tmp_path, monkeypatch, protocol):
    files = [f'data_batch_{i}' for i in range(1, 6)] + ['test_batch']
    written, md5 = _write_cifar(str(tmp_path), 'cifar-10-batches-py', files, 'batches.meta', 'label_names',
                                protocol=protocol)
    with pytest.raises(RuntimeError, match='corrupted'):      # published MD5s: these small files fail the check
        datasets.CIFAR10(str(tmp_path))
    monkeypatch.setattr(datasets.CIFAR10, 'train_list', [[f, md5[f]] for f in files[:5]])
    monkeypatch.setattr(datasets.CIFAR10, 'test_list', [['test_batch', md5['test_batch']]])
    monkeypatch.setattr(datasets.CIFAR10, 'meta', {'filename': 'batches.meta', 'key': 'label_names',
                                                   'md5': md5['batches.meta']})
    ds = datasets.CIFAR10(str(tmp_path), train=True, download=True)
    assert len(ds) == 20 and ds.classes[3] == 'class3' and ds.class_to_idx['class3'] == 3
    expect = np.concatenate([written[f][0] for f in files[:5]])
    labels = sum((written[f][1] for f in files[:5]), [])
    for i in range(len(ds)):
        img, target = ds[i]
        assert img.mode == 'RGB' and np.array_equal(np.array(img), expect[i].reshape(3, 32, 32).transpose(1, 2, 0))
        assert target == labels[i]
    test = datasets.CIFAR10(str(tmp_path), train=False, transform=transforms.ToTensor())
    assert len(test) == 4 and test[0][0].shape == (3, 32, 32)


def test_cifar100_fine_labels_and_malicious_pickle(tmp_path, monkeypatch):
    written, md5 = _write_cifar(str(tmp_path), 'cifar-100-python', ['train', 'test'], 'meta', 'fine_label_names',
                                label_key='fine_labels')
    monkeypatch.setattr(datasets.CIFAR100, 'train_list', [['train', md5['train']]])
    monkeypatch.setattr(datasets.CIFAR100, 'test_list', [['test', md5['test']]])
    monkeypatch.setattr(datasets.CIFAR100, 'meta', {'filename': 'meta', 'key': 'fine_label_names', 'md5': md5['meta']})
    ds = datasets.CIFAR100(str(tmp_path))
    assert ds.targets == written['train'][1] and len(ds) == 4

    class Evil:
        def __reduce__(self):
            return (os.system, ('echo pwned',))
    path = os.path.join(str(tmp_path), 'cifar-100-python', 'train')
    with open(path, 'wb') as f:
        pickle.dump({'data': Evil()}, f)
    monkeypatch.setattr(datasets.CIFAR100, 'train_list', [['train', hashlib.md5(open(path, 'rb').read()).hexdigest()]])
    with pytest.raises(RuntimeError, match='not allowed'):
        datasets.CIFAR100(str(tmp_path))
    with open(path, 'wb') as f:
        f.write(pickle.dumps({'data': 1})[:5])
    monkeypatch.setattr(datasets.CIFAR100, 'train_list', [['train', hashlib.md5(open(path, 'rb').read()).hexdigest()]])
    with pytest.raises(RuntimeError, match='not a readable CIFAR batch'):
        datasets.CIFAR100(str(tmp_path))


def test_cifar_missing_files_message(tmp_path):
    with pytest.raises(RuntimeError, match=r'cifar-10-batches-py.data_batch_1'):
        datasets.CIFAR10(str(tmp_path), download=True)


def test_image_folder_layout(tmp_path):
    rng = np.random.RandomState(2)
    expect = []
    for cls in ('dog', 'cat'):
        os.makedirs(tmp_path / cls / 'sub')
        for k, ext in enumerate(('.png', '.PNG', '.bmp')):
            arr = rng.randint(0, 256, (5, 6, 3)).astype(np.uint8)
            p = tmp_path / cls / (f'sub/img{k}{ext}' if k == 2 else f'img{k}{ext}')
            Image.fromarray(arr).save(str(p))
            expect.append((str(p), cls, arr))
        (tmp_path / cls / 'notes.txt').write_text('not an image')
    ds = datasets.ImageFolder(str(tmp_path))
    assert ds.classes == ['cat', 'dog'] and ds.class_to_idx == {'cat': 0, 'dog': 1}
    paths = [p for p, _ in ds.samples]
    assert paths == [str(tmp_path / c / f) for c in ('cat', 'dog') for f in ('img0.png', 'img1.PNG', 'sub/img2.bmp')]
    assert len(ds) == 6 and ds.imgs is ds.samples and ds.targets == [0, 0, 0, 1, 1, 1]
    by_path = {p: (cls, arr) for p, cls, arr in expect}
    for i in range(len(ds)):
        img, target = ds[i]
        cls, arr = by_path[ds.samples[i][0]]
        assert ds.classes[target] == cls and img.mode == 'RGB' and np.array_equal(np.array(img), arr)
    os.makedirs(tmp_path / 'empty')
    with pytest.raises(FileNotFoundError, match='Found no valid file for the classes empty'):
        datasets.ImageFolder(str(tmp_path))
    assert len(datasets.ImageFolder(str(tmp_path), allow_empty=True)) == 6
    folder = datasets.DatasetFolder(str(tmp_path), loader=lambda p: open(p).read(), extensions=('.txt',),
                                    allow_empty=True)
    assert [s for s, _ in folder] == ['not an image', 'not an image']


def test_fake_data_deterministic_per_index():
    ds = datasets.FakeData(size=4, image_size=(3, 6, 5), num_classes=3, transform=transforms.ToTensor())
    ember.manual_seed(0)
    before = ember.rand(1)
    ember.manual_seed(0)
    a = ds[2]
    after = ember.rand(1)
    assert ember.equal(before, after)          # reading an item leaves the caller's RNG stream alone
    b = ds[2]
    assert ember.equal(a[0], b[0]) and a[1] == b[1] and a[0].shape == (3, 6, 5) and 0 <= a[1] < 3
    assert not ember.equal(ds[1][0], a[0])
    with pytest.raises(IndexError, match='FakeData index out of range'):
        ds[4]
