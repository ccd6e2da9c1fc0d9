"""ember.save / ember.load against torch.save / torch.load: the same zip format both ways."""
import io
import os
import pickle

import numpy as np
import pytest
import torch

import ember

DTYPES = ['float32', 'float64', 'float16', 'bfloat16', 'int64', 'int32', 'int16', 'int8', 'uint8', 'bool',
          'complex64']


def _np(t):
    if isinstance(t, torch.Tensor):
        return t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()
    return np.asarray(t._a, dtype=np.float32) if t.dtype is ember.bfloat16 else t.numpy()


def _ember_t(dtype):
    a = (np.arange(12).reshape(3, 4) % 3).astype('float32')
    return ember.tensor(a).to(getattr(ember, dtype))


@pytest.mark.parametrize('dtype', DTYPES)
def test_ember_save_torch_load(dtype):
    t = _ember_t(dtype)
    buf = io.BytesIO()
    ember.save({'t': t, 'view': t.transpose(0, 1), 'row': t.select(0, 2)}, buf)
    buf.seek(0)
    r = torch.load(buf)
    assert str(r['t'].dtype) == f'torch.{dtype}'
    np.testing.assert_array_equal(_np(r['t']), _np(t))
    np.testing.assert_array_equal(_np(r['view']), _np(t).T)
    assert r['view'].stride() == (1, 4) and r['row'].storage_offset() == 8
    assert r['view'].untyped_storage().data_ptr() == r['t'].untyped_storage().data_ptr()   # views stay shared


@pytest.mark.parametrize('dtype', DTYPES)
def test_torch_save_ember_load(dtype):
    t = torch.tensor((np.arange(12).reshape(3, 4) % 3).astype('float32')).to(getattr(torch, dtype))
    buf = io.BytesIO()
    torch.save({'t': t, 'v': t.t(), 'n': [1, 2.5, 'x', None, (3,)], 'dt': t.dtype}, buf)
    buf.seek(0)
    r = ember.load(buf)
    assert r['t'].dtype.name == dtype and r['dt'] is r['t'].dtype
    np.testing.assert_array_equal(_np(r['t']), _np(t))
    assert r['v'].stride() == (1, 4)
    assert r['n'] == [1, 2.5, 'x', None, (3,)]
    r['t'].add_(1) if dtype not in ('bool',) else None           # loaded data is writable
    assert r['v'].untyped_storage().data_ptr() == r['t'].untyped_storage().data_ptr()


def test_torch_module_state_dict_and_requires_grad():
    m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    buf = io.BytesIO()
    torch.save(m.state_dict(), buf)
    buf.seek(0)
    sd = ember.load(buf)
    assert list(sd) == list(m.state_dict())
    for k, v in m.state_dict().items():
        np.testing.assert_array_equal(sd[k].numpy(), v.numpy())
    buf = io.BytesIO()
    ember.save(ember.ones(2, requires_grad=True), buf)
    buf.seek(0)
    assert torch.load(buf).requires_grad


def test_file_roundtrip_mmap_and_map_location(tmp_path):
    p = tmp_path / 'ck.pt'
    x = ember.arange(10, dtype=ember.float32)
    ember.save({'x': x}, p)
    assert torch.load(p)['x'].tolist() == x.tolist()
    y = ember.load(p, mmap=True)['x']
    assert y.tolist() == x.tolist()
    y.add_(1)                                                     # copy-on-write: the file is unchanged
    assert ember.load(p)['x'].tolist() == x.tolist()
    m = ember.load(p, map_location='meta')['x']
    assert m.device.type == 'meta' and m.shape == (10,)


def test_malicious_pickle_is_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / 'pwned'

    class Evil:
        def __reduce__(self):
            return (os.system, (f'touch {marker}',))
    buf = io.BytesIO()
    torch.save({'x': Evil()}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match='system'):
        ember.load(buf)
    assert not marker.exists()


def test_weights_only_false_allows_other_objects():
    buf = io.BytesIO()
    ember.save({'c': complex(1, 2), 'r': range(3)}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match='range'):
        ember.load(buf)
    buf.seek(0)
    assert ember.load(buf, weights_only=False)['r'] == range(3)


def test_truncated_and_corrupt_files(tmp_path):
    p = tmp_path / 'ok.pt'
    ember.save({'w': ember.ones(100)}, p)
    raw = p.read_bytes()
    q = tmp_path / 'bad.pt'
    q.write_bytes(raw[:len(raw) // 2])
    with pytest.raises(RuntimeError, match='PytorchStreamReader'):
        ember.load(q)
    # not a zip archive: read as torch's legacy format (tests/test_serialization_legacy.py), whose errors torch gives
    for bad, error in ((b'not a checkpoint', pickle.UnpicklingError), (b'', EOFError)):
        q.write_bytes(bad)
        with pytest.raises(error):
            torch.load(q)
        with pytest.raises(error):
            ember.load(q)


def test_failed_save_leaves_no_partial_file(tmp_path):
    p = tmp_path / 'ck.pt'
    ember.save({'w': ember.ones(3)}, p)
    before = p.read_bytes()

    class Boom:
        def __reduce__(self):
            raise RuntimeError('boom')
    with pytest.raises(RuntimeError, match='boom'):
        ember.save({'w': ember.zeros(3), 'x': Boom()}, p)
    assert p.read_bytes() == before                               # the old checkpoint is intact
    assert sorted(os.listdir(tmp_path)) == ['ck.pt']              # no temporary file left behind
    with pytest.raises(RuntimeError):
        ember.save({'x': Boom()}, tmp_path / 'new.pt')
    assert not (tmp_path / 'new.pt').exists()


def test_entries_are_64_byte_aligned(tmp_path):
    import struct
    import zipfile
    p = tmp_path / 'a.pt'
    ember.save({'w': ember.ones(7), 'v': ember.zeros(3, dtype=ember.int64)}, p)
    raw = p.read_bytes()
    for info in zipfile.ZipFile(p).infolist():
        n, m = struct.unpack('<HH', raw[info.header_offset + 26:info.header_offset + 30])
        assert (info.header_offset + 30 + n + m) % 64 == 0, info.filename


def test_plain_pickle_and_deepcopy():
    import copy
    x = ember.arange(4, dtype=ember.float32).requires_grad_()
    y = pickle.loads(pickle.dumps(x))
    assert y.tolist() == x.tolist() and y.requires_grad
    z = copy.deepcopy(x)
    assert z.tolist() == x.tolist() and z.requires_grad and z.data_ptr() != x.data_ptr()


def test_safetensors_roundtrip_with_torch(tmp_path):
    from safetensors.torch import load_file as t_load, save_file as t_save
    from ember.utils.safetensors import load_file, save_file, save, load
    ts = {d: _ember_t(d) for d in ('float32', 'float64', 'float16', 'bfloat16', 'int64', 'int8', 'uint8', 'bool')}
    p = tmp_path / 'a.safetensors'
    save_file(ts, p, metadata={'format': 'pt'})
    back = t_load(str(p))
    for k, t in ts.items():
        np.testing.assert_array_equal(_np(back[k]), _np(t))
    q = tmp_path / 'b.safetensors'
    t_save({'w': torch.arange(6.).view(2, 3), 'b': torch.tensor([True, False])}, str(q))
    e = load_file(q)
    assert e['w'].tolist() == [[0., 1., 2.], [3., 4., 5.]] and e['b'].dtype is ember.bool
    assert load(save({'x': ember.ones(3)}))['x'].tolist() == [1., 1., 1.]
    x = ember.ones(4)
    with pytest.raises(RuntimeError, match='share memory'):
        save({'a': x, 'b': x.view(2, 2)})
