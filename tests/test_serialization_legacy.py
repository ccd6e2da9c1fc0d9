"""ember.save / ember.load in torch's legacy format (before 1.6, ``_use_new_zipfile_serialization=False``),
against torch.save / torch.load (NOTE [legacy format] in ember/serialization.py)."""
import collections
import io
import pickle

import numpy as np
import pytest
import torch

import ember

DTYPES = ['float32', 'float64', 'float16', 'bfloat16', 'int64', 'int32', 'int16', 'int8', 'uint8', 'bool',
          'complex64', 'complex128']


def _bits(t):
    """The tensor's values as a NumPy array, compared bit for bit (bfloat16 as its raw 16 bits)."""
    if isinstance(t, torch.Tensor):
        t = t.detach()
        return t.view(torch.int16).numpy() if t.dtype == torch.bfloat16 else t.numpy()
    return np.asarray(t.detach()._a).view(np.int16) if t.dtype is ember.bfloat16 else t.detach().numpy()


def _same(e, t):
    assert str(e.dtype).split('.')[-1] == str(t.dtype).split('.')[-1]
    assert tuple(e.shape) == tuple(t.shape) and tuple(e.stride()) == tuple(t.stride())
    assert e.storage_offset() == t.storage_offset() and e.requires_grad == t.requires_grad
    a, b = _bits(e), _bits(t)
    assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _torch_legacy(obj):
    buf = io.BytesIO()
    torch.save(obj, buf, _use_new_zipfile_serialization=False)
    buf.seek(0)
    return buf


def _ember_legacy(obj):
    buf = io.BytesIO()
    ember.save(obj, buf, _use_new_zipfile_serialization=False)
    buf.seek(0)
    return buf


def _torch_t(dtype):
    return (torch.arange(-6, 6).reshape(3, 4) * 1.25).to(getattr(torch, dtype))


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('weights_only', [True, False])
def test_torch_legacy_ember_load(dtype, weights_only):
    t = _torch_t(dtype)
    obj = {'t': t, 'view': t.t(), 'row': t[2], 'tail': t.view(-1)[5:9], 'scalar': t[1, 1].clone(),
           'empty': t[:0], 'zero': torch.zeros(0, 3, dtype=t.dtype), 'list': [t[0], (t[1],)],
           'nested': {'x': {'y': t[:, 1:3]}}}
    r = ember.load(_torch_legacy(obj), weights_only=weights_only)
    ref = torch.load(_torch_legacy(obj), weights_only=weights_only)
    for k in ('t', 'view', 'row', 'tail', 'scalar', 'empty', 'zero'):
        _same(r[k], ref[k])
    _same(r['list'][0], ref['list'][0])
    _same(r['list'][1][0], ref['list'][1][0])
    assert isinstance(r['list'][1], tuple)
    _same(r['nested']['x']['y'], ref['nested']['x']['y'])


def test_views_share_one_storage():
    base = torch.arange(12, dtype=torch.float32)
    r = ember.load(_torch_legacy({'base': base, 'mat': base[2:].view(2, 5), 'odd': base[1::2]}))
    assert r['mat'].storage_offset() == 2 and r['odd'].storage_offset() == 1 and r['odd'].stride() == (2,)
    ptr = r['base'].untyped_storage().data_ptr()
    assert r['mat'].untyped_storage().data_ptr() == ptr == r['odd'].untyped_storage().data_ptr()
    r['base'][3] = -1.0                                        # writes through every view, as in torch
    assert float(r['mat'][0, 1]) == -1.0 and float(r['odd'][1]) == -1.0


def test_module_state_dicts_and_parameters():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.Linear(5, 2))
    sd = net.state_dict()
    r = ember.load(_torch_legacy(sd))
    assert isinstance(r, collections.OrderedDict) and list(r) == list(sd)
    for k in sd:
        _same(r[k], sd[k])
    assert r._metadata == sd._metadata                        # the state dict's version info is kept
    p = torch.nn.Parameter(torch.randn(3, 2))
    r = ember.load(_torch_legacy({'p': p, 'frozen': torch.nn.Parameter(torch.ones(2), requires_grad=False)}))
    assert isinstance(r['p'], ember.nn.Parameter) and r['p'].requires_grad
    assert not r['frozen'].requires_grad
    _same(r['p'], p)
    # and into an ember module
    m = ember.nn.Linear(5, 2)
    m.load_state_dict(ember.load(_torch_legacy(torch.nn.Linear(5, 2).state_dict())))


def _refused_as_by_torch(buf, name):
    """weights_only refuses the file's global ``name`` in torch and in ember, with pickle.UnpicklingError."""
    with pytest.raises(pickle.UnpicklingError):
        torch.load(buf, weights_only=True)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match=name):
        ember.load(buf)
    buf.seek(0)


def test_a_whole_module():
    net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
    buf = _torch_legacy(net)                  # its classes go in as ('module', class, file, source) persistent ids
    _refused_as_by_torch(buf, 'Sequential')
    r = ember.load(buf, weights_only=False)
    assert isinstance(r, ember.nn.Sequential) and isinstance(r[0], ember.nn.Linear)
    _same(r[0].weight, net[0].weight)
    x = np.ones((1, 3), np.float32)
    assert r(ember.tensor(x)).detach().numpy().tobytes() == net(torch.tensor(x)).detach().numpy().tobytes()


def test_ember_legacy_torch_load():
    t = ember.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    obj = collections.OrderedDict(t=t, view=t.transpose(0, 1), row=t.select(0, 2), scalar=ember.tensor(7),
                                  empty=ember.zeros(0, 3), p=ember.nn.Parameter(ember.ones(2)),
                                  h=t.to(ember.bfloat16), b=t > 4, c=t.to(ember.complex64), i=t.to(ember.int64),
                                  f16=t.to(ember.float16))
    for weights_only in (True, False):
        r = torch.load(_ember_legacy(obj), weights_only=weights_only)
        assert type(r) is collections.OrderedDict and list(r) == list(obj)
        for k in obj:
            _same(obj[k], r[k])
        assert isinstance(r['p'], torch.nn.Parameter)
        assert r['view'].untyped_storage().data_ptr() == r['t'].untyped_storage().data_ptr()
        assert r['row'].storage_offset() == 8


def test_ember_roundtrip_and_module_state_dict(tmp_path):
    m = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.LayerNorm(4))
    p = tmp_path / 'legacy.pt'
    ember.save(m.state_dict(), p, _use_new_zipfile_serialization=False)
    assert p.read_bytes()[:2] != b'PK'
    r = ember.load(p)
    for k, v in m.state_dict().items():
        _same(r[k], v.detach())
    with open(p, 'rb') as fh:                                  # an open file, too
        assert list(ember.load(fh)) == list(m.state_dict())
    t = torch.load(p)
    for k, v in m.state_dict().items():
        _same(v, t[k])
    x = ember.arange(10.)
    r = ember.load(_ember_legacy([x, x[3:7], {'u': x.to(ember.uint16)}]))
    r[0][4] = 100.0
    assert float(r[1][1]) == 100.0                             # views still share their storage
    assert r[2]['u'].dtype is ember.uint16 and r[2]['u'].tolist() == list(range(10))


class Custom:
    """A class no weights_only load allows by default."""


def test_weights_only_refuses_a_custom_class():
    buf = _torch_legacy({'w': torch.ones(2), 'c': Custom()})
    _refused_as_by_torch(buf, 'Custom')
    r = ember.load(buf, weights_only=False)
    assert isinstance(r['c'], Custom) and r['w'].tolist() == [1.0, 1.0]
    buf.seek(0)
    with ember.serialization.safe_globals([Custom]):
        assert isinstance(ember.load(buf)['c'], Custom)


def test_malicious_legacy_pickle_runs_nothing(tmp_path):
    marker = tmp_path / 'ran'

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), 'w'))
    buf = _torch_legacy({'w': torch.ones(2), 'evil': Evil()})
    with pytest.raises(pickle.UnpicklingError, match='open'):
        ember.load(buf)
    assert not marker.exists()                                 # neither the scan for storages nor the load ran it


def test_map_location():
    a = torch.arange(4.)
    obj = {'a': a, 'b': a[1:]}
    r = ember.load(_torch_legacy(obj), map_location='meta')
    assert r['a'].device.type == 'meta' and r['b'].shape == (3,)
    r = ember.load(_torch_legacy(obj), map_location={'cpu': 'meta'})
    assert r['a'].device.type == 'meta'
    r = ember.load(_torch_legacy(obj), map_location=ember.device('cpu'))
    assert r['b'].tolist() == [1.0, 2.0, 3.0]
    seen = []
    r = ember.load(_torch_legacy(obj), map_location=lambda storage, loc: seen.append(loc) or storage)
    assert seen == ['cpu'] and r['a'].tolist() == [0.0, 1.0, 2.0, 3.0]     # one storage, mapped once


def test_old_cuda_checkpoint_on_cpu():
    # torch before 1.0 named a CUDA tensor's storage torch.cuda.FloatStorage, located 'cuda:0'
    a = torch.arange(4.)
    raw = _torch_legacy({'a': a, 'b': a[1:]}).getvalue()
    assert raw.count(b'ctorch\nFloatStorage\n') == 1
    raw = raw.replace(b'ctorch\nFloatStorage\n', b'ctorch.cuda\nFloatStorage\n')
    raw = raw.replace(b'X\x03\x00\x00\x00cpu', b'X\x06\x00\x00\x00cuda:0')
    for weights_only in (True, False):
        ref = torch.load(io.BytesIO(raw), map_location='cpu', weights_only=weights_only)
        r = ember.load(io.BytesIO(raw), map_location='cpu', weights_only=weights_only)
        _same(r['a'], ref['a'])
        _same(r['b'], ref['b'])
        seen = []
        ember.load(io.BytesIO(raw), map_location=lambda storage, loc: seen.append(loc) or storage.cpu())
        assert seen == ['cuda:0']


def test_errors_as_torch(tmp_path):
    for data in (b'', b'not a checkpoint', pickle.dumps(5, protocol=2)):
        for weights_only in (True, False):
            with pytest.raises(Exception) as theirs:
                torch.load(io.BytesIO(data), weights_only=weights_only)
            with pytest.raises(theirs.type):
                ember.load(io.BytesIO(data), weights_only=weights_only)
    buf = _torch_legacy({'w': torch.ones(100)})
    with pytest.raises(RuntimeError, match='truncated'):
        ember.load(io.BytesIO(buf.getvalue()[:-8]))
    p = tmp_path / 'legacy.pt'
    p.write_bytes(buf.getvalue())
    with pytest.raises(RuntimeError, match='mmap can only be used'):
        ember.load(p, mmap=True)


def test_failed_legacy_save_leaves_no_partial_file(tmp_path):
    p = tmp_path / 'ck.pt'
    ember.save({'w': ember.ones(3)}, p, _use_new_zipfile_serialization=False)
    before = p.read_bytes()

    class Boom:
        def __reduce__(self):
            raise RuntimeError('boom')
    with pytest.raises(RuntimeError, match='boom'):
        ember.save({'w': ember.zeros(3), 'x': Boom()}, p, _use_new_zipfile_serialization=False)
    assert p.read_bytes() == before
    assert [x.name for x in tmp_path.iterdir()] == ['ck.pt']
    buf = io.BytesIO()
    with pytest.raises(RuntimeError, match='boom'):
        ember.save({'x': Boom()}, buf, _use_new_zipfile_serialization=False)
    assert buf.getvalue() == b''                               # nothing written to a file object either


def _equal(a, b):
    """ember's and torch's loads of one file hold the same values (tensors bit for bit)."""
    if isinstance(a, ember.Tensor):
        return isinstance(b, torch.Tensor) and str(a.dtype)[6:] == str(b.dtype)[6:] and \
            tuple(a.shape) == tuple(b.shape) and _bits(a).tobytes() == _bits(b).tobytes()
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def test_fuzzed_legacy_files_load_what_torch_loads_or_raise_clearly(tmp_path):
    import random
    marker = tmp_path / 'ran'

    class Touch:
        def __reduce__(self):
            return (open, (str(marker), 'w'))
    lin = torch.nn.Linear(3, 2)
    valid = _torch_legacy({'sd': lin.state_dict(), 'step': 7, 'half': torch.arange(4.).half(),
                           'view': torch.arange(12.).reshape(3, 4)[:, 1:3]}).getvalue()
    rng = random.Random(0)
    cases = []
    for _ in range(150):
        i = rng.randrange(len(valid))
        cases.append(valid[:i] + bytes([valid[i] ^ (1 << rng.randrange(8))]) + valid[i + 1:])
    cases += [valid[:rng.randrange(len(valid))] for _ in range(30)]
    cases += [valid.replace(old, new) for old, new in [
        (b'collections\nOrderedDict', b'builtins\neval'), (b'torch._utils\n_rebuild_tensor_v2', b'builtins\nexec'),
        (b'torch\nFloatStorage', b'torch\nDoubleStorage'), (b'torch\nHalfStorage', b'torch\nLongStorage')]]
    cases.append(_torch_legacy({'w': torch.ones(2), 'x': Touch()}).getvalue())
    original = torch.load(io.BytesIO(valid))
    loaded = refused = 0
    for data in cases:
        try:
            mine = ember.load(io.BytesIO(data))
        except (pickle.UnpicklingError, RuntimeError, EOFError):
            refused += 1
            continue
        loaded += 1
        if not _equal(mine, original):                         # ember accepts a change: torch reads it the same
            assert _equal(mine, torch.load(io.BytesIO(data))), data
    assert not marker.exists()
    assert refused > 50 and loaded > 5, (refused, loaded)      # both outcomes were exercised
