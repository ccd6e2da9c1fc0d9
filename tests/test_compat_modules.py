"""Modules and names that published code imports (found running timm's model zoo under ``ember run``):
torchvision.ops.misc, nn.SyncBatchNorm, generic data classes, torch.hub's cache, torch.jit.annotations and
nn.utils.fusion, each against torch where torch can run it."""
import hashlib
import os
import warnings

import numpy as np
import pytest
import torch

import ember
import ember.nn as nn


def test_vision_ops_misc_blocks():
    from ember.vision.ops import misc
    m = misc.Conv2dNormActivation(3, 8, kernel_size=3, stride=2)
    assert [type(c).__name__ for c in m] == ['Conv2d', 'BatchNorm2d', 'ReLU'] and m[0].bias is None
    assert tuple(m(ember.randn(2, 3, 9, 9)).shape) == (2, 8, 5, 5) and m.out_channels == 8
    assert misc.Conv2dNormActivation(3, 8, norm_layer=None)[0].bias is not None
    se = misc.SqueezeExcitation(8, 2)
    assert [n for n, _ in se.named_children()] == ['avgpool', 'fc1', 'fc2', 'activation', 'scale_activation']
    x = ember.randn(2, 8, 4, 4)
    np.testing.assert_allclose(se(x).detach().numpy(), (x * se._scale(x)).detach().numpy(), rtol=1e-6)
    mlp = misc.MLP(4, [8, 3], dropout=0.0)
    assert [type(c).__name__ for c in mlp] == ['Linear', 'ReLU', 'Dropout', 'Linear', 'Dropout']
    assert tuple(misc.Permute([0, 2, 3, 1])(x).shape) == (2, 4, 4, 8)
    # FrozenBatchNorm2d equals an eval-mode BatchNorm2d with the same statistics, and loads its checkpoint
    bn = nn.BatchNorm2d(8).eval()
    with ember.no_grad():
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
        bn.weight.uniform_(0.5, 2)
        bn.bias.uniform_(-1, 1)
    fb = misc.FrozenBatchNorm2d(8)
    fb.load_state_dict(bn.state_dict())                          # num_batches_tracked is dropped
    np.testing.assert_allclose(fb(x).numpy(), bn(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert repr(fb) == 'FrozenBatchNorm2d(8, eps=1e-05)' and not list(fb.parameters())
    sd = misc.stochastic_depth
    assert sd(x, 0.5, 'row', training=False) is x
    y = sd(ember.ones(1000, 3), 0.25, 'row')
    kept = (y[:, 0] != 0).float().mean().item()
    assert 0.65 < kept < 0.85
    np.testing.assert_allclose(np.unique(y.numpy()), [0.0, 4 / 3], rtol=1e-6)
    with pytest.raises(ValueError, match="mode has to be either 'batch' or 'row'"):
        sd(x, 0.1, 'col')


def test_sync_batch_norm_outside_distributed_is_batch_norm():
    x = np.random.default_rng(0).standard_normal((4, 3, 5, 5)).astype(np.float32)
    e, t = nn.SyncBatchNorm(3), torch.nn.SyncBatchNorm(3)
    np.testing.assert_allclose(e(ember.from_numpy(x)).detach().numpy(), t(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(e.running_var.numpy(), t.running_var.numpy(), rtol=1e-5)
    net = nn.Sequential(nn.Conv2d(3, 3, 1), nn.Sequential(nn.BatchNorm2d(3)))
    bn = net[1][0]
    conv = nn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert type(conv[1][0]) is nn.SyncBatchNorm and conv[1][0].weight is bn.weight
    assert conv[1][0].running_mean is bn.running_mean
    with pytest.raises(ValueError, match='expected at least 2D input'):
        e(ember.ones(3))


def test_data_classes_are_generic_as_torch():
    from ember.utils.data import Sampler, Dataset, IterableDataset, DataLoader, Subset, DistributedSampler

    class Batches(Sampler[list]):
        def __iter__(self):
            return iter([[0, 1], [2]])

    class Squares(Dataset[int]):
        def __getitem__(self, i):
            return i * i

        def __len__(self):
            return 3
    for cls in (Sampler, Dataset, IterableDataset, DataLoader, Subset, DistributedSampler):
        assert cls[int] is not None                      # subscriptable in annotations and bases
    assert [b.tolist() for b in DataLoader(Squares(), batch_sampler=Batches())] == [[0, 1], [4]]


def test_hub_cache(tmp_path, monkeypatch):
    monkeypatch.setenv('TORCH_HOME', str(tmp_path))
    assert ember.hub.get_dir() == os.path.join(str(tmp_path), 'hub')
    sd = {'w': ember.arange(4.0)}
    ckpt = tmp_path / 'hub' / 'checkpoints'
    ckpt.mkdir(parents=True)
    plain = ckpt / 'model.pth'
    ember.save(sd, str(plain))
    digest = hashlib.sha256(plain.read_bytes()).hexdigest()
    hashed = ckpt / f'model-{digest[:8]}.pth'
    hashed.write_bytes(plain.read_bytes())
    got = ember.hub.load_state_dict_from_url('https://example.org/weights/model.pth', map_location='cpu')
    assert got['w'].tolist() == [0.0, 1.0, 2.0, 3.0]
    ember.hub.load_state_dict_from_url(f'https://example.org/model-{digest[:8]}.pth', check_hash=True)
    bad = ckpt / 'model-deadbeef.pth'
    bad.write_bytes(plain.read_bytes())
    with pytest.raises(RuntimeError, match='invalid hash value'):
        ember.hub.load_state_dict_from_url('https://example.org/model-deadbeef.pth', check_hash=True)
    with pytest.raises(NotImplementedError, match='hubconf'):
        ember.hub.load('pytorch/vision', 'resnet18')
    # torch finds the same file in the same cache
    import torch.hub
    monkeypatch.setattr(torch.hub, '_hub_dir', None)
    assert torch.hub.get_dir() == ember.hub.get_dir()


def test_jit_annotations_and_fusion():
    from ember.jit.annotations import List, Tuple, BroadcastingList2   # noqa: F401
    assert List[int] == __import__('typing').List[int]
    from ember.nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval
    for transpose in (False, True):
        conv = (nn.ConvTranspose2d(3, 4, 3) if transpose else nn.Conv2d(3, 4, 3)).eval()
        bn = nn.BatchNorm2d(4).eval()
        with ember.no_grad():
            bn.running_mean.uniform_(-1, 1)
            bn.running_var.uniform_(0.5, 2)
            bn.weight.uniform_(0.5, 2)
        x = ember.randn(2, 3, 6, 6)
        fused = fuse_conv_bn_eval(conv, bn, transpose=transpose)
        np.testing.assert_allclose(fused(x).detach().numpy(), bn(conv(x)).detach().numpy(), rtol=1e-4, atol=1e-5)
    lin, bn1 = nn.Linear(5, 4).eval(), nn.BatchNorm1d(4).eval()
    with ember.no_grad():
        bn1.running_var.uniform_(0.5, 2)
    z = ember.randn(3, 5)
    np.testing.assert_allclose(fuse_linear_bn_eval(lin, bn1)(z).detach().numpy(), bn1(lin(z)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(AssertionError, match='Fusion only for eval'):
        fuse_conv_bn_eval(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4))


def test_jit_names_that_mean_nothing_eagerly():
    """annotate, export and interface are identities in eager torch (timm's crossvit calls jit.annotate);
    script and trace return their argument, as torch's do with PYTORCH_JIT=0 (x-transformers scripts a function
    at import)."""
    import typing

    def method(self):
        return 1
    for lib in (ember, torch):
        assert lib.jit.annotate(typing.List[int], [1, 2]) == [1, 2]
        assert lib.jit.export(method) is method
    assert ember.jit.interface(int) is int


def test_jit_script_and_trace_as_torch_without_its_jit(tmp_path):
    import subprocess
    import sys
    code = ("import torch\n"
            "def f(x): return x * 2\n"
            "m = torch.nn.Linear(2, 2)\n"
            "print(torch.jit.script(f) is f, torch.jit.script(m) is m,\n"
            "      isinstance(m, torch.jit.ScriptModule), isinstance(f, torch.jit.ScriptFunction))\n")
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True,
                         env={**__import__('os').environ, 'PYTORCH_JIT': '0'}).stdout
    assert out.split() == ['True'] * 2 + ['False'] * 2       # torch itself, with its JIT off

    (tmp_path / 'prog.py').write_text(code)
    ember_out = subprocess.run([sys.executable, '-m', 'ember', 'run', str(tmp_path / 'prog.py')], capture_output=True,
                               text=True, check=True, env={**__import__('os').environ, 'PYTORCH_JIT': '0'}).stdout
    assert ember_out.split() == out.split()

    def f(x):
        return x * 2
    m = ember.nn.Linear(2, 2)
    assert ember.jit.script(f) is f
    assert not isinstance(m, ember.jit.ScriptModule) and not isinstance(f, ember.jit.ScriptFunction)
    assert ember.jit.script(f)(ember.ones(2)).tolist() == [2.0, 2.0]
    # with its JIT on, torch scripts a module into a RecursiveScriptModule (tests/test_users24_gaps.py)
    for L in (torch, ember):
        s = L.jit.script(L.nn.Linear(2, 2))
        assert type(s).__name__ == 'RecursiveScriptModule' and isinstance(s, L.jit.ScriptModule)
    # trace records the run as torch's tracer does with its JIT on (tests/test_jit_save.py): a TracedModule that
    # holds the module's own parameters, not the module itself
    for L in (torch, ember):
        lin = L.nn.Linear(2, 2)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            traced = L.jit.trace(lin, L.ones(1, 2))
        assert traced is not lin and isinstance(traced, L.jit.TracedModule) and traced.weight is lin.weight


EMBEDDING_BAG_CASES = [
    dict(input=[1, 2, 4, 5, 4, 3, 2, 9], offsets=[0, 4], mode='mean'),
    dict(input=[1, 2, 4, 5, 4, 3, 2, 9], offsets=[0, 4], mode='sum'),
    dict(input=[1, 2, 4, 5, 4, 3, 2, 9], offsets=[0, 4], mode='max'),
    dict(input=[[1, 2, 4], [4, 3, 2]], mode='mean'),
    dict(input=[1, 2, 4, 5, 4, 3, 2, 9], offsets=[0, 4, 4], mode='mean'),       # an empty bag: zeros
    dict(input=[1, 2, 4, 5, 4, 3, 2, 9], offsets=[0, 4, 4], mode='max'),
    dict(input=[1, 2, 4, 5, 4, 3, 2, 9], offsets=[0, 4, 8], mode='sum', include_last_offset=True),
    dict(input=[1, 2, 0, 5, 0, 3, 2, 9], offsets=[0, 4], mode='mean', padding_idx=0),
    dict(input=[1, 2, 4, 5, 4, 3, 2, 9], offsets=[0, 3], mode='sum', per_sample_weights=[0.5, 1, 2, 1, 1, 3, 1, 1]),
]


@pytest.mark.parametrize('case', range(len(EMBEDDING_BAG_CASES)))
def test_embedding_bag_matches_torch(case):
    w = np.random.default_rng(case).standard_normal((10, 4)).astype(np.float32)
    out = []
    for lib in (torch, ember):
        c = dict(EMBEDDING_BAG_CASES[case])
        weight = lib.tensor(w, requires_grad=True)
        inp, offsets, psw = c.pop('input'), c.pop('offsets', None), c.pop('per_sample_weights', None)
        o = lib.nn.functional.embedding_bag(lib.tensor(inp), weight, None if offsets is None else lib.tensor(offsets),
                                            per_sample_weights=None if psw is None else lib.tensor(psw), **c)
        (o * lib.arange(o.numel(), dtype=o.dtype).reshape(o.shape)).sum().backward()
        out.append((o.detach().numpy(), weight.grad.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], atol=1e-6)
    np.testing.assert_allclose(out[1][1], out[0][1], atol=1e-6)


def test_embedding_bag_module_and_errors():
    torch.manual_seed(0)
    ember.manual_seed(0)
    tb, eb = torch.nn.EmbeddingBag(10, 3, mode='sum', padding_idx=2), ember.nn.EmbeddingBag(10, 3, mode='sum', padding_idx=2)
    np.testing.assert_array_equal(eb.weight.detach().numpy(), tb.weight.detach().numpy())
    assert repr(eb) == repr(tb)
    x, off = [1, 2, 4, 5, 4, 3, 2, 9], [0, 4]
    np.testing.assert_allclose(eb(ember.tensor(x), ember.tensor(off)).detach().numpy(),
                               tb(torch.tensor(x), torch.tensor(off)).detach().numpy(), atol=1e-6)
    pre = ember.nn.EmbeddingBag.from_pretrained(ember.eye(3))
    assert not pre.weight.requires_grad and pre(ember.tensor([[0, 1]])).tolist() == [[0.5, 0.5, 0.0]]
    with pytest.raises(ValueError, match='offsets has to be None'):
        ember.nn.functional.embedding_bag(ember.tensor([[1, 2]]), ember.eye(3), ember.tensor([0]))
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        ember.nn.functional.embedding_bag(ember.tensor([1, 2]), ember.eye(3), ember.tensor([0]),
                                          per_sample_weights=ember.ones(2))


def test_hub_downloads_into_its_cache(tmp_path, monkeypatch):
    """load_state_dict_from_url downloads an absent checkpoint (lightning's tests serve one from a local HTTP
    server), as torch's; a download whose SHA-256 does not match the name's prefix leaves no file behind."""
    import functools
    import http.server
    import threading
    served = tmp_path / 'served'
    served.mkdir()
    ember.save({'w': ember.arange(3.0)}, str(served / 'ck.pt'))
    digest = hashlib.sha256((served / 'ck.pt').read_bytes()).hexdigest()
    (served / 'ck-0000beef.pt').write_bytes((served / 'ck.pt').read_bytes())
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f'http://127.0.0.1:{server.server_address[1]}'
        monkeypatch.setenv('TORCH_HOME', str(tmp_path / 'home'))
        got = ember.hub.load_state_dict_from_url(f'{url}/ck.pt', progress=False)
        assert got['w'].tolist() == [0.0, 1.0, 2.0]
        cache = tmp_path / 'home' / 'hub' / 'checkpoints'
        assert sorted(p.name for p in cache.iterdir()) == ['ck.pt']
        with pytest.raises(RuntimeError, match='invalid hash value'):
            ember.hub.load_state_dict_from_url(f'{url}/ck-0000beef.pt', check_hash=True, progress=False)
        assert sorted(p.name for p in cache.iterdir()) == ['ck.pt']         # no partial file
        dst = tmp_path / 'direct.pt'
        ember.hub.download_url_to_file(f'{url}/ck.pt', str(dst), hash_prefix=digest[:6], progress=False)
        assert dst.read_bytes() == (served / 'ck.pt').read_bytes()
    finally:
        server.shutdown()
