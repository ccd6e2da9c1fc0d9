"""ember.load as an attacker and as torch see it: what the restricted loader refuses (and that nothing from the
file runs), torch's weights_only switches, names torch and ember both read, layouts validated against their
storage, a bounded fuzz of checkpoints and of safetensors headers, and thread-safe gradient accumulation."""
import collections
import io
import os
import pickle
import random
import struct
import threading
import warnings
import zipfile

import numpy as np
import pytest
import torch

import ember
from ember import serialization as S


def _zip(pkl, storages=(), prefix='archive'):
    """A checkpoint with the given data.pkl bytes and storage entries (key -> bytes)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, 'w', zipfile.ZIP_STORED) as z:
        z.writestr(f'{prefix}/data.pkl', pkl)
        for key, data in storages:
            z.writestr(f'{prefix}/data/{key}', data)
        z.writestr(f'{prefix}/version', b'3\n')
    return buf.getvalue()


def _payload(marker):
    """A pickle that creates ``marker`` when unpickled without restriction."""
    class Evil:
        def __reduce__(self):
            return (os.system, (f'touch {marker}',))
    return pickle.dumps({'w': Evil()}, protocol=2)


def _opened(data):
    return io.BytesIO(data)


# --- weights_only and torch's switches ---------------------------------------------------------

@pytest.mark.parametrize('weights_only', [None, True])
def test_the_default_and_none_refuse_code_and_run_nothing(tmp_path, weights_only):
    marker = tmp_path / 'ran'
    data = _zip(_payload(marker))
    with pytest.raises(pickle.UnpicklingError, match='Unsupported global: GLOBAL posix.system'):
        ember.load(_opened(data), weights_only=weights_only)
    with pytest.raises(pickle.UnpicklingError):
        ember.load(_opened(data))
    assert not marker.exists()
    with pytest.raises(pickle.UnpicklingError):       # torch agrees
        torch.load(_opened(data), weights_only=weights_only)
    assert not marker.exists()


def test_only_an_explicit_false_unpickles_anything(tmp_path):
    marker = tmp_path / 'ran'
    ember.load(_opened(_zip(_payload(marker))), weights_only=False)
    assert marker.exists()


def _numpy_checkpoint():
    buf = io.BytesIO()
    torch.save({'a': np.arange(3)}, buf)       # numpy globals: outside the default allow-list
    return buf.getvalue()


def _outcome(lib, data, **kw):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        try:
            r = lib.load(_opened(data), **kw)
            res = 'loaded' if isinstance(r['a'], np.ndarray) and r['a'].tolist() == [0, 1, 2] else 'wrong'
        except pickle.UnpicklingError:
            res = 'refused'
        except RuntimeError as e:
            res = 'error: ' + str(e)[:60]
    return res, any('TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD' in str(x.message) for x in w)


@pytest.mark.parametrize('env', [{}, {'TORCH_FORCE_WEIGHTS_ONLY_LOAD': '1'}, {'TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD': 'true'},
                                 {'TORCH_FORCE_WEIGHTS_ONLY_LOAD': 'YES', 'TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD': '1'},
                                 {'TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD': '0'}])
@pytest.mark.parametrize('kw', [{}, {'weights_only': None}, {'weights_only': True}, {'weights_only': False}])
def test_environment_switches_decide_as_in_torch(monkeypatch, env, kw):
    for k in ('TORCH_FORCE_WEIGHTS_ONLY_LOAD', 'TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD'):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    data = _numpy_checkpoint()
    theirs, ours = _outcome(torch, data, **kw), _outcome(ember, data, **kw)
    assert ours[0].split(':')[0] == theirs[0].split(':')[0] and ours[1] == theirs[1], (ours, theirs)


def test_weights_only_false_loads_numpy_arrays_as_torch_does():
    r = ember.load(_opened(_numpy_checkpoint()), weights_only=False)
    assert isinstance(r['a'], np.ndarray) and r['a'].tolist() == [0, 1, 2]


def test_a_pickle_module_means_no_restriction_unless_asked():
    data = _numpy_checkpoint()
    with pytest.raises(RuntimeError, match='Can not safely load weights when explicit pickle_module'):
        ember.load(_opened(data), pickle_module=pickle, weights_only=True)


# --- state setting (BUILD) on objects the file did not make ------------------------------------

def _global(module, name):
    return b'c' + module.encode() + b'\n' + name.encode() + b'\n'


def test_build_cannot_change_a_dtype_for_the_whole_process():
    # 38 bytes of pickle: GLOBAL torch.float32, then BUILD with slot state {'itemsize': 8}
    pkl = b'\x80\x02' + _global('torch', 'float32') + b'N}X\x08\x00\x00\x00itemsizeK\x08s\x86b.'
    with pytest.raises(pickle.UnpicklingError, match='BUILD'):
        ember.load(_opened(_zip(pkl)))
    assert ember.float32.itemsize == 4
    with pytest.raises(AttributeError, match='immutable'):    # and the object itself refuses
        ember.float32.itemsize = 8


def test_build_cannot_change_an_allowed_function():
    pkl = (b'\x80\x02' + _global('torch._utils', '_rebuild_tensor_v2') +
           b'}X\x0c\x00\x00\x00__defaults__)sb.')
    with pytest.raises(pickle.UnpicklingError, match='BUILD'):
        ember.load(_opened(_zip(pkl)))
    assert S._rebuild_tensor_v2.__defaults__ == (False, None, None)


def test_build_on_a_tensor_is_an_error_not_a_broken_tensor():
    buf = io.BytesIO()
    ember.save(ember.ones(2), buf)
    z = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    pkl = z.read('archive/data.pkl')
    assert pkl.endswith(b'.')
    evil = pkl[:-1] + b'}X\x02\x00\x00\x00_aN' + b's' + b'b.'     # state {'_a': None} on the rebuilt tensor
    data = _zip(evil, [('0', z.read('archive/data/0'))])
    with pytest.raises(pickle.UnpicklingError, match='BUILD'):
        ember.load(_opened(data))


def test_items_cannot_be_set_on_objects_the_file_did_not_make():
    # SETITEM on an allowed global (the OrderedDict class): refused; on a dict the file made: fine
    pkl = b'\x80\x02' + _global('collections', 'OrderedDict') + b'X\x01\x00\x00\x00aK\x01s.'
    with pytest.raises(pickle.UnpicklingError, match='SETITEM'):
        ember.load(_opened(_zip(pkl)))
    assert ember.load(_opened(_zip(b'\x80\x02}X\x01\x00\x00\x00aK\x01s.'))) == {'a': 1}


def test_add_safe_globals_and_the_context_manager():
    pt = collections.namedtuple('Pt', 'x y')      # a class with a known module/name that pickle can find
    global Pt
    Pt = pt
    pt.__module__, pt.__qualname__ = __name__, 'Pt'
    buf = io.BytesIO()
    ember.save({'p': pt(1, 2)}, buf)
    data = buf.getvalue()
    with pytest.raises(pickle.UnpicklingError, match=f'GLOBAL {__name__}.Pt'):
        ember.load(_opened(data))
    with S.safe_globals([pt]):
        assert ember.load(_opened(data)) == {'p': pt(1, 2)}
        assert pt in S.get_safe_globals()
    assert pt not in S.get_safe_globals()
    before = S.get_safe_globals()       # what ember's own modules registered (ember.nested's, as torch's)
    S.add_safe_globals([pt])
    try:
        assert ember.load(_opened(data))['p'].y == 2
    finally:
        S.clear_safe_globals()
        assert S.get_safe_globals() == []
        S.add_safe_globals(before)


# --- ember reads what ember writes, and torch reads it too ------------------------------------

def test_sizes_devices_bytearrays_and_friends_round_trip_both_ways():
    x = ember.arange(6.).reshape(2, 3)
    obj = {'shape': x.shape, 'dev': ember.device('cpu'), 'ba': bytearray(b'\x00ab'), 'c': complex(1, 2),
           's': {1, 2}, 'dt': ember.float64, 'od': collections.OrderedDict(a=x), 'b': b'\xff\x00', 'x': x}
    buf = io.BytesIO()
    ember.save(obj, buf)
    mine = ember.load(_opened(buf.getvalue()))
    theirs = torch.load(_opened(buf.getvalue()))          # torch's default is weights_only=True
    for r in (mine, theirs):
        assert tuple(r['shape']) == (2, 3) and str(r['dev']) == 'cpu' and r['ba'] == bytearray(b'\x00ab')
        assert r['c'] == complex(1, 2) and r['s'] == {1, 2} and r['b'] == b'\xff\x00'
        assert r['x'].tolist() == x.tolist() and r['od']['a'].tolist() == x.tolist()
    assert isinstance(mine['shape'], ember.Size) and mine['dt'] is ember.float64 and mine['dev'] == ember.device('cpu')
    assert isinstance(theirs['shape'], torch.Size) and theirs['dt'] is torch.float64
    tb = io.BytesIO()
    torch.save({'shape': torch.Size([2, 3]), 'dev': torch.device('cpu'), 'ba': bytearray(b'ab'),
                'sd': torch.nn.Linear(2, 3).state_dict()}, tb)
    r = ember.load(_opened(tb.getvalue()))
    assert r['shape'] == ember.Size([2, 3]) and r['dev'] == ember.device('cpu') and r['ba'] == bytearray(b'ab')
    assert r['sd']._metadata == collections.OrderedDict([('', {'version': 1})])


# --- layouts validated against their storage -------------------------------------------------------

def _forged(size, stride, offset, numel=6):
    class Rebuild:
        def __reduce__(self):
            ref = S._StorageRef(ember.arange(float(numel)).untyped_storage(), ember.float32)
            return (S._REBUILD_TENSOR, (ref, offset, size, stride, False, collections.OrderedDict()))
    buf = io.BytesIO()
    storages = {}
    S._Pickler(buf, 2, storages).dump({'w': Rebuild()})
    (key, storage, _), = storages.values()
    return _zip(buf.getvalue(), [(key, bytes(S._storage_bytes(storage)))])


@pytest.mark.parametrize('size,stride,offset,match', [
    ((2,), (-1,), 1, 'Negative strides'),
    ((4,), (2,), 0, 'out of bounds for storage'),
    ((3,), (1,), 4, 'out of bounds for storage'),
    ((2,), (1,), -1, 'negative storage offset'),
    ((-2,), (1,), 0, 'negative size'),
    ((2, 3), (3,), 0, 'malformed'),
])
def test_lying_layouts_raise_naming_the_storage(size, stride, offset, match):
    with pytest.raises(RuntimeError, match=match) as e:
        ember.load(_opened(_forged(size, stride, offset)))
    assert "storage 'archive/data/0'" in str(e.value)
    with pytest.raises(RuntimeError):             # torch refuses each of them too
        torch.load(_opened(_forged(size, stride, offset)))


def test_a_valid_forged_layout_loads():
    assert ember.load(_opened(_forged((2, 2), (1, 2), 1)))['w'].tolist() == [[1.0, 3.0], [2.0, 4.0]]


# --- bfloat16 without ml_dtypes: an error at first use, never wrong data ---------------------------

def test_bfloat16_without_ml_dtypes_raises_naming_the_extra(tmp_path):
    import subprocess
    import sys
    tb = tmp_path / 'bf.pt'
    torch.save({'h': torch.ones(2, dtype=torch.bfloat16)}, tb)
    code = f'''
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] == 'ml_dtypes':
            raise ImportError('blocked')
sys.meta_path.insert(0, Block())
import ember
for f in (lambda: ember.ones(2, dtype=ember.bfloat16), lambda: ember.ones(2).bfloat16(),
          lambda: ember.load({str(tb)!r})):
    try:
        f()
        print('no error')
    except ImportError as e:
        print('ImportError', "pip install 'ember[bfloat16]'" in str(e))
print(ember.ones(2).sum().item())
'''
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split('\n')[:4] == ['ImportError True'] * 3 + ['2.0'], out.stdout + out.stderr


# --- fuzz: every mutated checkpoint loads what torch loads, or raises a clear error ------------------

_CLEAR = (pickle.UnpicklingError, RuntimeError, ImportError)


def _valid_checkpoint():
    lin = ember.nn.Linear(3, 2)
    obj = {'sd': lin.state_dict(), 'step': 7, 'names': ['a', 'b'], 'shape': ember.Size([2, 3]),
           'half': ember.arange(4.).to(ember.float16), 'view': ember.arange(12.).reshape(3, 4)[:, 1:3]}
    buf = io.BytesIO()
    ember.save(obj, buf)
    return buf.getvalue()


def _same(a, b):
    if isinstance(a, ember.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype.name == str(b.dtype)[6:] and \
            tuple(a.shape) == tuple(b.shape) and np.array_equal(a.numpy(), b.numpy(), equal_nan=True)
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, ember.dtype):
        return str(b) == 'torch.' + a.name
    return type(a) is type(b) and a == b or (isinstance(a, tuple) and tuple(a) == tuple(b))


def _mutations(pkl, rng):
    """Mutated pickles: flipped and replaced bytes, truncations, swapped opcodes, renamed globals."""
    ops = [b'b', b'R', b's', b'a', b'e', b'u', b'0', b'2', b'(', b't', b'Q', b'.', b'}', b']', b'N', b'\x81']
    for _ in range(120):
        i = rng.randrange(len(pkl))
        yield pkl[:i] + bytes([pkl[i] ^ (1 << rng.randrange(8))]) + pkl[i + 1:]
    for _ in range(40):
        i = rng.randrange(len(pkl))
        yield pkl[:i] + rng.choice(ops) + pkl[i + 1:]
    for _ in range(20):
        yield pkl[:rng.randrange(len(pkl))]
    for old, new in [(b'collections\nOrderedDict', b'builtins\neval'), (b'torch\nSize', b'os\nsystem'),
                     (b'torch._utils\n_rebuild_tensor_v2', b'builtins\nexec'),
                     (b'torch\nFloatStorage', b'torch\nDoubleStorage'), (b'torch\nHalfStorage', b'torch\nLongStorage')]:
        yield pkl.replace(old, new)


def test_fuzzed_checkpoints_load_what_torch_loads_or_raise_clearly(tmp_path):
    marker = tmp_path / 'ran'
    valid = _valid_checkpoint()
    z = zipfile.ZipFile(io.BytesIO(valid))
    pkl = z.read('archive/data.pkl')
    storages = [(n.split('/')[-1], z.read(n)) for n in z.namelist() if '/data/' in n]
    rng = random.Random(0)
    cases = [_zip(m, storages) for m in _mutations(pkl, rng)]
    # storage entries that lie: short, long, missing
    for k in range(len(storages)):
        for data in (storages[k][1][:-3], storages[k][1] + b'\x00' * 8):
            cases.append(_zip(pkl, storages[:k] + [(storages[k][0], data)] + storages[k + 1:]))
        cases.append(_zip(pkl, storages[:k] + storages[k + 1:]))
    # the whole file's bytes flipped (zip structure and CRCs) and truncated
    for _ in range(60):
        i = rng.randrange(len(valid))
        cases.append(valid[:i] + bytes([valid[i] ^ 0x55]) + valid[i + 1:])
    cases += [valid[:rng.randrange(1, len(valid))] for _ in range(20)]
    for lib in (torch, ember):      # an empty file: pickle's EOFError in both
        with pytest.raises(EOFError):
            lib.load(_opened(b''))
    cases += [pkl.replace(b'touch', b'touch') + _payload(marker)]      # not even a zip
    cases.append(_zip(_payload(marker)))
    original = torch.load(_opened(valid))
    loaded = refused = 0
    for data in cases:
        try:
            mine = ember.load(_opened(data))
        except _CLEAR:
            refused += 1
            continue
        loaded += 1
        if _same(mine, original):       # a harmless change (a field nobody reads): exactly the original data
            continue
        theirs = torch.load(_opened(data))      # anything else ember accepts, torch reads the same way
        assert _same(mine, theirs), (mine, theirs)
    assert not marker.exists()
    assert refused > 200 and loaded > 5, (refused, loaded)     # both outcomes were exercised


def test_fuzzed_safetensors_headers_raise_clearly_or_load_exactly(tmp_path):
    from ember.utils import safetensors as st      # the safetensors package is in the test extra
    path = tmp_path / 'ok.safetensors'
    st.save_file({'a': ember.arange(6.).reshape(2, 3), 'b': ember.ones(2, dtype=ember.int64)}, str(path))
    raw = path.read_bytes()
    n = struct.unpack('<Q', raw[:8])[0]
    header, body = raw[8:8 + n], raw[8 + n:]
    rng = random.Random(1)
    variants = []
    for _ in range(80):
        i = rng.randrange(len(header))
        variants.append(header[:i] + bytes([rng.randrange(32, 127)]) + header[i + 1:])
    variants += [header.replace(b'"F64"', b'"F32"'), header.replace(b'[0,48]', b'[0,4800]'),
                 header.replace(b'[0,48]', b'[8,0]'), header.replace(b'[2,3]', b'[3,3]'), header[:-5], b'{}' * 3]
    ok = bad = 0
    for h in variants:
        p = tmp_path / 'f.safetensors'
        p.write_bytes(struct.pack('<Q', len(h)) + h + body)
        try:
            r = st.load_file(str(p))
        except (RuntimeError, ValueError, KeyError, TypeError, IndexError, Exception) as e:
            assert type(e).__name__ in ('SafetensorError', 'RuntimeError', 'ValueError'), repr(e)
            bad += 1
            continue
        ok += 1
        from safetensors.numpy import load_file as ref
        expect = ref(str(p))
        assert sorted(r) == sorted(expect) and all(np.array_equal(r[k].numpy(), expect[k]) for k in r)
    assert bad > 10 and ok > 0, (ok, bad)


# --- gradient accumulation under threads ----------------------------------------------------------

def test_concurrent_backward_into_one_parameter_loses_nothing():
    p = ember.zeros(1_000_000, dtype=ember.float64, requires_grad=True)

    def work():
        for _ in range(25):
            (p * 1.0).sum().backward()
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert float(p.grad.min()) == 100.0 and float(p.grad.max()) == 100.0
