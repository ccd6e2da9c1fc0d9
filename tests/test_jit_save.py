"""TorchScript files: ember.jit.trace(...).save() read by torch.jit.load, and ember.jit.load of ember's and torch's
archives, compared with torch in the same process."""
import io
import os
import pickle
import warnings
import zipfile

import numpy as np
import pytest
import torch

import ember


def _models(L):
    nn, F = L.nn, L.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.drop, self.fc2 = nn.Linear(4, 8), nn.Dropout(0.1), nn.Linear(8, 3)

        def forward(self, x):
            return self.fc2(self.drop(F.relu(self.fc1(x))))

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.bn = nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4)
            self.pool, self.fc = nn.MaxPool2d(2), nn.Linear(4 * 4 * 4, 5)

        def forward(self, x):
            return self.fc(L.flatten(self.pool(F.relu(self.bn(self.conv(x)))), 1))

    class Block(nn.Module):
        def __init__(self, d=8):
            super().__init__()
            self.ln, self.q, self.k, self.v, self.o = nn.LayerNorm(d), *(nn.Linear(d, d) for _ in range(4))
            self.d = d

        def forward(self, x):
            h = self.ln(x)
            a = L.softmax(self.q(h) @ self.k(h).transpose(-2, -1) / self.d ** 0.5, dim=-1)
            return x + self.o(a @ self.v(h))

    def fn(a, b):
        return L.sin(a) * b + a.sum()

    return {'mlp': (MLP, [(2, 4)]), 'cnn': (CNN, [(2, 3, 8, 8)]), 'block': (Block, [(2, 5, 8)]),
            'fn': (fn, [(3,), (3,)])}


CASES = ['mlp', 'cnn', 'block', 'fn']


def _pair(name):
    """The same model in torch and in ember (torch's weights, BatchNorm statistics moved off their defaults), in
    eval mode, and example inputs for both."""
    rng = np.random.default_rng(0)
    tm, shapes = _models(torch)[name]
    em, _ = _models(ember)[name]
    inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    if name == 'fn':
        return tm, em, inputs
    torch.manual_seed(0)
    tm = tm().eval()
    for b in tm.buffers():
        if b.dtype == torch.float32:
            b.copy_(torch.rand(b.shape) + 0.5)
    em = em().eval()
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, em, inputs


def _trace(L, m, inputs):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return L.jit.trace(m, tuple(L.tensor(x) for x in inputs))


def _close(a, b):
    a = a.detach().numpy() if hasattr(a, 'detach') else a
    b = b.detach().numpy() if hasattr(b, 'detach') else b
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('name', CASES)
def test_torch_loads_embers_archive(name, tmp_path):
    tm, em, inputs = _pair(name)
    traced = _trace(ember, em, inputs)
    path = str(tmp_path / f'{name}.pt')
    traced.save(path)
    loaded = torch.jit.load(path)                     # torch parses and type-checks ember's TorchScript
    want = em(*[ember.tensor(x) for x in inputs])
    _close(loaded(*[torch.tensor(x) for x in inputs]), want)
    _close(tm(*[torch.tensor(x) for x in inputs]), want)           # and ember's model is torch's
    if name != 'fn':
        assert loaded.original_name == type(em).__name__
        assert sorted(n for n, _ in loaded.named_parameters()) == sorted(n for n, _ in em.named_parameters())
        assert sorted(n for n, _ in loaded.named_buffers()) == sorted(n for n, _ in em.named_buffers())
        assert loaded.training is False and all(p.requires_grad for p in loaded.parameters())


@pytest.mark.parametrize('name', CASES)
def test_ember_loads_torchs_archive(name, tmp_path):
    tm, em, inputs = _pair(name)
    path = str(tmp_path / f'{name}.pt')
    _trace(torch, tm, inputs).save(path)
    loaded = ember.jit.load(path)
    want = tm(*[torch.tensor(x) for x in inputs])
    _close(loaded(*[ember.tensor(x) for x in inputs]), want)
    if name != 'fn':
        assert loaded.original_name == type(tm).__name__ and loaded.training is False
        assert isinstance(loaded, ember.nn.Module) and isinstance(loaded, ember.jit.ScriptModule)
        theirs = {k: v.detach().numpy() for k, v in tm.state_dict().items()}
        ours = {k: v.detach().numpy() for k, v in loaded.state_dict().items()}
        assert ours.keys() == theirs.keys()
        for k in ours:
            np.testing.assert_array_equal(ours[k], theirs[k])


@pytest.mark.parametrize('name', CASES)
def test_ember_loads_its_own_archive(name):
    tm, em, inputs = _pair(name)
    buf = io.BytesIO()
    ember.jit.save(_trace(ember, em, inputs), buf)
    buf.seek(0)
    loaded = ember.jit.load(buf)
    _close(loaded(*[ember.tensor(x) for x in inputs]), em(*[ember.tensor(x) for x in inputs]))


def test_traced_module_shares_the_module_and_shows_its_graph():
    tm, em, inputs = _pair('mlp')
    tt, et = _trace(torch, tm, inputs), _trace(ember, em, inputs)
    assert isinstance(et, ember.jit.TracedModule) and isinstance(et, ember.nn.Module)
    assert isinstance(tt, torch.jit.TracedModule)
    assert et.original_name == tt.original_name == 'MLP'
    assert et.fc1.weight is em.fc1.weight and tt.fc1.weight is tm.fc1.weight        # the same parameters
    assert [n for n, _ in et.named_parameters()] == [n for n, _ in tt.named_parameters()]
    assert et.code.startswith('def forward(self,\n    x: Tensor) -> Tensor:') and tt.code.startswith(
        'def forward(self,\n    x: Tensor) -> Tensor:')
    assert 'ops.aten.linear(x, self.fc1.weight, self.fc1.bias)' in et.code
    assert 'aten.relu' in str(et.graph)
    x = [ember.tensor(v) for v in inputs]
    _close(et(*x), em(*x))
    et.train()                 # the mode reaches the module run: the submodules are the same objects
    assert et.drop.training and em.drop.training
    et(*x)
    assert em.training


def test_traced_function():
    _, ef, inputs = _pair('fn')
    tf = _trace(torch, _models(torch)['fn'][0], inputs)
    f = _trace(ember, ef, inputs)
    assert isinstance(f, ember.jit.ScriptFunction) and isinstance(tf, torch.jit.ScriptFunction)
    assert not isinstance(ef, ember.jit.ScriptFunction)
    assert f.code.startswith('def fn(a: Tensor,\n    b: Tensor) -> Tensor:') and tf.code.startswith(
        'def fn(a: Tensor,\n    b: Tensor) -> Tensor:')
    x = [ember.tensor(v) for v in inputs]
    _close(f(*x), ef(*x))


def test_save_of_an_untraced_module_raises_as_torchs():
    for L in (torch, ember):
        with pytest.raises(AttributeError, match="'Linear' object has no attribute 'save'"):
            L.jit.save(L.nn.Linear(2, 2), 'never-written.pt')
    assert not os.path.exists('never-written.pt')
    for L in (torch, ember):
        with pytest.raises(ValueError, match='does not exist'):
            L.jit.load('no-such-file.pt')


def test_sequential_and_constants(tmp_path):
    """Submodules named by index (``getattr(self, "0")``) and a tensor the forward reads from outside the module
    (``CONSTANTS.c0`` in constants.pkl)."""
    scale = np.array([1.5, -2.0], dtype=np.float32)

    def build(L):
        s = L.tensor(scale)

        class Scaled(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.body = L.nn.Sequential(L.nn.Linear(3, 2), L.nn.Tanh())

            def forward(self, x):
                return self.body(x) * s
        return Scaled().eval()
    tm, em = build(torch), build(ember)
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    path = str(tmp_path / 'scaled.pt')
    traced = _trace(ember, em, [x])
    assert 'CONSTANTS.c0' in traced.code and 'getattr(self.body, "0")' in traced.code
    traced.save(path)
    _close(torch.jit.load(path)(torch.tensor(x)), em(ember.tensor(x)))
    _close(ember.jit.load(path)(ember.tensor(x)), em(ember.tensor(x)))
    torch_path = str(tmp_path / 'scaled_torch.pt')
    _trace(torch, tm, [x]).save(torch_path)
    _close(ember.jit.load(torch_path)(ember.tensor(x)), tm(torch.tensor(x)))


def _rewrite(src, dst, edit):
    """A copy of the archive ``src`` with each entry's bytes passed through ``edit(name, data)``."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, 'w') as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, edit(info.filename, zin.read(info.filename)))


@pytest.mark.parametrize('code, what', [
    ('__import__("os").system("touch {marker}")', 'the call __import__'),
    ('eval("open(\'{marker}\', \'w\')")', 'the call eval'),
    ('torch.save(x, "{marker}")', 'the operator torch.save'),
    ('x.__class__', 'reading .__class__'),
    ('[open("{marker}", "w") for _ in range(1)]', 'the expression ListComp'),
])
def test_loading_never_runs_the_files_code(tmp_path, code, what):
    tm, _, inputs = _pair('mlp')
    src, dst = str(tmp_path / 'mlp.pt'), str(tmp_path / 'evil.pt')
    marker = str(tmp_path / 'ran')
    _trace(torch, tm, inputs).save(src)

    def edit(name, data):
        if name.endswith('.py') and b'class MLP' in data:
            text = data.decode()
            assert '    return _0' in text
            data = text.replace('    return _0', f'    _9 = {code.format(marker=marker)}\n    return _0').encode()
        return data
    _rewrite(src, dst, edit)
    m = ember.jit.load(dst)          # loading reads the code; running it is what the interpreter refuses
    with pytest.raises(NotImplementedError, match=what) as info:
        m(ember.tensor(inputs[0]))
    assert '.py:' in str(info.value)                       # names the file and line
    assert not os.path.exists(marker)


def test_data_pkl_goes_through_the_restricted_unpickler(tmp_path):
    tm, _, inputs = _pair('mlp')
    src, dst = str(tmp_path / 'mlp.pt'), str(tmp_path / 'evil.pt')
    _trace(torch, tm, inputs).save(src)
    evil = b'\x80\x02cos\nsystem\nX\x04\x00\x00\x00trueq\x00\x85R.'

    _rewrite(src, dst, lambda name, data: evil if name.endswith('/data.pkl') else data)
    with pytest.raises(pickle.UnpicklingError, match='os.system'):
        ember.jit.load(dst)


def test_a_checkpoint_is_no_torchscript_archive(tmp_path):
    path = str(tmp_path / 'ckpt.pt')
    ember.save({'w': ember.ones(2)}, path)
    with pytest.raises(RuntimeError, match='no TorchScript archive'):
        ember.jit.load(path)
    with pytest.raises(RuntimeError):
        torch.jit.load(path)


def test_trace_of_what_it_cannot_record_still_runs():
    def f(x, n):
        return x * n
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        traced = ember.jit.trace(f, (ember.ones(2), 3))
    assert traced(ember.ones(2), 2).tolist() == [2.0, 2.0]
    with pytest.raises(NotImplementedError, match='inputs are tensors'):
        traced.code


def _more_models(L):
    nn = L.nn

    class TupleOut(nn.Module):          # a tuple output and an in-place ReLU
        def __init__(self):
            super().__init__()
            self.lin, self.act = nn.Linear(3, 3), nn.ReLU(inplace=True)

        def forward(self, x):
            y = self.act(self.lin(x))
            return y, y.sum(-1)

    class Tokens(nn.Module):            # integer indices, Embedding, GELU, a Linear without bias, mean over a dim
        def __init__(self):
            super().__init__()
            self.emb, self.act, self.lin = nn.Embedding(10, 4), nn.GELU(), nn.Linear(4, 2, bias=False)

        def forward(self, x):
            return self.lin(self.act(self.emb((x.abs() * 3).long()))).mean(1)

    class Heads(nn.Module):             # sizes read from the input (torch: torch.size / NumToTensor / int), SDPA,
        def __init__(self):             # a contiguous copy (memory_format) and a cast (dtype as its number)
            super().__init__()
            self.lin, self.norm = nn.Linear(8, 8), nn.GroupNorm(1, 5)

        def forward(self, x):
            B, T, C = x.shape
            q = self.lin(self.norm(x)).view(B, T, 2, C // 2).transpose(1, 2)
            out = L.nn.functional.scaled_dot_product_attention(q, q, q).transpose(1, 2).reshape(B, T, C)
            return L.cat([out, out.permute(0, 2, 1).reshape(B, T, C)], 1).to(L.float64).clamp(min=0)
    return {'tuple': (TupleOut, (2, 3)), 'tokens': (Tokens, (2, 3)), 'heads': (Heads, (2, 5, 8))}


@pytest.mark.parametrize('name', ['tuple', 'tokens', 'heads'])
def test_more_layers_both_ways(name, tmp_path):
    (tcls, shape), (ecls, _) = _more_models(torch)[name], _more_models(ember)[name]
    torch.manual_seed(0)
    tm, em = tcls().eval(), ecls().eval()
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    want = tm(torch.tensor(x))
    ours, theirs = str(tmp_path / 'ours.pt'), str(tmp_path / 'theirs.pt')
    _trace(ember, em, [x]).save(ours)
    _trace(torch, tm, [x]).save(theirs)
    got = [torch.jit.load(ours)(torch.tensor(x)), ember.jit.load(ours)(ember.tensor(x)),
           ember.jit.load(theirs)(ember.tensor(x))]
    for g in got:
        if name == 'tuple':
            assert isinstance(g, tuple) and len(g) == 2
            _close(g[0], want[0])
            _close(g[1], want[1])
        else:
            _close(g, want)


# --- users'-side gaps (2026-11-27 night): torch-written files of common layers, extra files, size checks -------

class _TorchWritten(torch.nn.Module):
    """Layers whose traced code torch writes as functions ember's interpreter had no name for: lstm/gru, the
    upsample operators, factories with layout/pin_memory, a -inf constant, a dict output."""

    def __init__(self):
        super().__init__()
        self.lstm, self.gru = torch.nn.LSTM(4, 3, batch_first=True), torch.nn.GRU(3, 2)

    def forward(self, x):
        y, _ = self.lstm(x)
        z, _ = self.gru(y)
        up = torch.nn.functional.interpolate(x[:, None], scale_factor=2, mode='bilinear', align_corners=False)
        near = torch.nn.functional.interpolate(x[:, None], size=(6, 8), mode='nearest')
        n = x.shape[1]
        mask = torch.zeros(n, n).masked_fill(torch.ones(n, n).triu(1) > 0, float('-inf'))
        return {'z': z, 'up': up, 'near': near, 'mask': mask}


def test_ember_loads_torchs_files_of_rnns_upsampling_factories_and_dicts(tmp_path):
    torch.manual_seed(0)
    m = _TorchWritten().eval()
    x = torch.randn(2, 3, 4)
    f = tmp_path / 't.pt'
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        torch.jit.trace(m, x, strict=False).save(str(f))
    want = m(x)
    got = ember.jit.load(str(f))(ember.tensor(x.numpy()))
    assert sorted(got) == sorted(want)
    for k in want:
        np.testing.assert_allclose(got[k].detach().numpy(), want[k].detach().numpy(), rtol=1e-5, atol=1e-6)


def test_extra_files_round_trip_both_ways(tmp_path):
    tm = torch.jit.trace(torch.nn.Linear(2, 2), torch.ones(1, 2))
    em = ember.jit.trace(ember.nn.Linear(2, 2), ember.ones(1, 2))
    tm.save(str(tmp_path / 't.pt'), _extra_files={'config.txt': '{"stride": 32}'})
    em.save(str(tmp_path / 'e.pt'), _extra_files={'config.txt': '{"stride": 32}'})
    for load, path in ((torch.jit.load, 'e.pt'), (ember.jit.load, 't.pt'), (ember.jit.load, 'e.pt')):
        extra = {'config.txt': '', 'missing.txt': ''}
        load(str(tmp_path / path), _extra_files=extra)
        assert extra == {'config.txt': b'{"stride": 32}', 'missing.txt': b''}


def test_saved_file_refuses_other_input_sizes_in_torch_and_ember(tmp_path):
    """NOTE [TorchScript size guards]: the flatten's view has the example's sizes in the code; another batch size
    must raise, not compute with the example's numbers."""
    m = ember.nn.Sequential(ember.nn.Linear(3, 2), ember.nn.Flatten(0))
    f = str(tmp_path / 'g.pt')
    ember.jit.trace(m, ember.ones(4, 3)).save(f)
    t, e = torch.jit.load(f), ember.jit.load(f)
    assert tuple(t(torch.ones(4, 3)).shape) == tuple(e(ember.ones(4, 3)).shape) == (8,)
    for shape in ((5, 3), (4, 3, 1), (4,)):
        with pytest.raises(Exception, match='traced .ember.jit.trace. on inputs of sizes \\[4, 3\\]'):
            t(torch.ones(*shape))
        with pytest.raises(RuntimeError, match='traced .ember.jit.trace. on inputs of sizes \\[4, 3\\]'):
            e(ember.ones(*shape))


def test_a_failed_save_leaves_no_file(tmp_path):
    class Odd(ember.nn.Module):
        def forward(self, x):
            return x + 1
    t = ember.jit.trace(Odd(), ember.ones(2))
    path, buf = tmp_path / 'x.pt', io.BytesIO()
    with pytest.raises(TypeError):
        t.save(str(path), _extra_files={'bad': 3.5})       # not str or bytes: fails while writing
    with pytest.raises(TypeError):
        t.save(buf, _extra_files={'bad': 3.5})
    assert os.listdir(tmp_path) == [] and buf.getvalue() == b''


def test_recurrent_layers_saved_by_ember_run_in_torch_on_the_cpu(tmp_path):
    """ember's LSTM/GRU step through _thnn_fused_*_cell, which torch runs on CUDA only: the trace records their
    pieces, so torch.jit.load runs the file on a CPU."""
    for make in (lambda L: L.nn.LSTM(4, 3, num_layers=2, batch_first=True), lambda L: L.nn.GRU(4, 3)):
        ember.manual_seed(0)
        m = make(ember).eval()
        x = ember.randn(2, 5, 4)
        f = str(tmp_path / 'r.pt')
        ember.jit.trace(m, x).save(f)
        out = torch.jit.load(f)(torch.tensor(x.numpy()))
        np.testing.assert_allclose(out[0].detach().numpy(), m(x)[0].detach().numpy(), rtol=1e-5, atol=1e-6)


def test_dict_outputs_as_torchs_trace():
    class M(ember.nn.Module):
        def forward(self, x):
            return {'a': x * 2, 'b': x.sum(0)}
    with pytest.raises(RuntimeError, match='Encountering a dict at the output of the tracer'):
        ember.jit.trace(M(), ember.ones(2, 3))
    t = ember.jit.trace(M(), ember.ones(2, 3), strict=False)
    buf = io.BytesIO()
    t.save(buf)
    buf.seek(0)
    out = torch.jit.load(buf)(torch.ones(2, 3))
    assert sorted(out) == ['a', 'b'] and out['b'].tolist() == [2., 2., 2.]


def test_a_scripted_archive_is_refused_with_a_clear_message(tmp_path):
    f = str(tmp_path / 's.pt')
    torch.jit.script(torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU())).save(f)
    with pytest.raises(NotImplementedError, match='torch.jit.script'):
        ember.jit.load(f)
