"""Behaviour the pytorch/tutorials scripts showed ember lacked, each against torch: the graph of reflected
operators (2 * t), factories with out=, and warnings attributed to the user's line."""
import warnings

import numpy as np
import pytest
import torch

import ember


@pytest.mark.parametrize('expr', ['2 * b', '2 + b', '2 / b', '2 & c', '3 | c', '1 ^ c'])
def test_reflected_operators_record_torch_graph(expr):
    out = []
    for lib in (torch, ember):
        b = lib.tensor([0.5, 1.5, 3.0], requires_grad=True).sin()
        c = lib.tensor([1, 2, 3])
        r = eval(expr)
        g = r.grad_fn
        out.append((r.detach().numpy().tolist(), str(r.dtype).split('.')[-1],
                    None if g is None else (type(g).__name__,
                                            [type(n).__name__ if n else None for n, _ in g.next_functions])))
    assert out[0] == out[1]


def test_factories_take_out_as_torch():
    for lib in (torch, ember):
        lib.manual_seed(0)
        c = lib.empty(0, dtype=lib.float64)
        r = lib.rand(2, 2, out=c)
        assert r is c and c.dtype == lib.float64
        out = [c.numpy().copy()]
        z = lib.empty(3, dtype=lib.int64)
        with warnings.catch_warnings():
            warnings.simplefilter('error')          # torch's factories resize out without a warning
            lib.zeros(2, out=z)
        out += [z.numpy().copy(), lib.arange(5, out=lib.empty(0)).numpy(), lib.linspace(0, 1, 3, out=lib.empty(3)).numpy(),
                lib.full((2,), 3.0, out=lib.empty(2)).numpy(), lib.randperm(5, out=lib.empty(0, dtype=lib.int64)).numpy()]
        with pytest.raises(RuntimeError, match=r'dtype Float does not match dtype of out parameter \(Int\)'):
            lib.ones(2, out=lib.empty(2, dtype=lib.int32), dtype=lib.float32)
        if lib is torch:
            ref = out
    for a, b in zip(ref, out):
        np.testing.assert_array_equal(b, a)


def test_warnings_point_at_the_callers_line():
    """NOTE [warning location]: through a public function's wrapper and generated entry points, the warning
    names this file, as torch's does."""
    for fn in (lambda: ember.nn.functional.log_softmax(ember.ones(2, 3)),
               lambda: ember.sin(ember.ones(2), out=ember.empty(3))):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            fn()
        assert w and all(m.filename == __file__ for m in w), [(m.filename, str(m.message)) for m in w]


def test_decompositions_return_torch_named_tuples():
    A = np.random.default_rng(0).standard_normal((3, 3))
    for fn, fields in (('svd', ('U', 'S', 'V')), ('qr', ('Q', 'R')), ('slogdet', ('sign', 'logabsdet')),
                       ('aminmax', ('min', 'max'))):
        rs = []
        for lib in (torch, ember):
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')         # torch.qr's deprecation
                r = getattr(lib, fn)(lib.tensor(A))
                m = getattr(lib.tensor(A), fn)()
            assert type(r).__name__ == type(m).__name__ == fn and isinstance(r, tuple)
            assert repr(r).split('(')[0].split('.')[-1] == fn
            rs.append([getattr(r, f).numpy() for f in fields])
        for a, b in zip(*rs):
            np.testing.assert_allclose(np.abs(b), np.abs(a), rtol=1e-6, atol=1e-8)


def test_repr_suffixes_wrap_as_torch():
    """A suffix (grad_fn=, dtype=, requires_grad=) that would pass linewidth goes on its own line."""
    out = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        out.append([repr((lib.randn(3, 8) * 0.01).requires_grad_() * 1),
                    repr(lib.randn(2, 7, dtype=lib.float64, requires_grad=True)),
                    repr(lib.empty(1024, 5, 65535, 65535, device='meta', requires_grad=True) * 2),
                    repr(lib.randn(4, requires_grad=True) * 2)])
    assert [r.replace('torch.', 'X.') for r in out[0]] == [r.replace('ember.', 'X.') for r in out[1]]


def test_torch_functional_module():
    import ember.functional as EF
    import torch.functional as TF
    for name in EF.__all__:
        if hasattr(TF, name):
            assert callable(getattr(EF, name)), name
    a = np.arange(6.0).reshape(2, 3)
    assert np.array_equal(EF.einsum('ij->j', ember.tensor(a)).numpy(), TF.einsum('ij->j', torch.tensor(a)).numpy())


def test_non_leaf_grad_warning_and_node_reprs_as_torch():
    out = []
    for lib in (torch, ember):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            y.grad
        acc = y.grad_fn.next_functions[0][0]
        out.append((str(w[0].message).split(' (Triggered')[0], repr(acc).split(' at ')[0], acc.name()))
    assert out[0][0] == out[1][0]
    assert out[0][1] == out[1][1] == '<AccumulateGrad object'
    assert out[1][2] == 'torch::autograd::AccumulateGrad'


NODE_CASES = [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)), ((5, 2, 3), (3,)),
              ((3,), (5, 3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)), ((1, 2, 3), (5, 3, 4))]


def test_node_names_printed_as_torch():
    """NOTE [node names by shape]: grad_fn=<MmBackward0> for a matrix product, <AddmmBackward0> for nn.Linear on
    a batch, torch's overload numbers for pow and clamp."""
    names = []
    for lib in (torch, ember):
        F = lib.nn.functional
        r = [(lib.randn(*a, requires_grad=True) @ lib.randn(*b, requires_grad=True)).grad_fn.name()
             for a, b in NODE_CASES]
        w, b = lib.randn(4, 3, requires_grad=True), lib.randn(4, requires_grad=True)
        r += [F.linear(lib.randn(*s), w, bias).grad_fn.name() for s in ((2, 3), (3,), (5, 2, 3)) for bias in (b, None)]
        x = lib.randn(3, requires_grad=True)
        r += [x.clamp(0, 1).grad_fn.name(), x.clamp(min=lib.zeros(3)).grad_fn.name(), (x ** x).grad_fn.name(),
              (2 ** x).grad_fn.name(), (x ** 2).grad_fn.name(), repr(lib.nn.Linear(3, 2)(lib.ones(1, 3))).split('grad_fn=')[1]]
        names.append(r)
    assert names[0] == names[1]


def test_lstm_takes_its_state_as_a_list():
    """yunjey/pytorch-tutorial's language model passes (h, c) as a list."""
    for lib in (torch, ember):
        lib.manual_seed(0)
        lstm, cell = lib.nn.LSTM(3, 4, 1, batch_first=True), lib.nn.LSTMCell(3, 4)
        out, (h, c) = lstm(lib.randn(2, 5, 3), [lib.zeros(1, 2, 4), lib.zeros(1, 2, 4)])
        h2, c2 = cell(lib.randn(2, 3), [lib.zeros(2, 4), lib.zeros(2, 4)])
        assert out.shape == (2, 5, 4) and h.shape == (1, 2, 4) and h2.shape == (2, 4)


def test_channels_last_layouts_as_torch():
    """pytorch/tutorials' memory_format_tutorial: to/contiguous/clone(memory_format=channels_last(_3d)),
    is_contiguous(memory_format=...), Module.to(memory_format=...), preserved by clone and pointwise ops."""
    out = []
    for lib in (torch, ember):
        x = lib.randn(4, 3, 6, 5)
        y = x.to(memory_format=lib.channels_last)
        p = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
        w = lib.nn.Conv2d(8, 4, 3).to(memory_format=lib.channels_last).weight
        z = lib.randn(2, 3, 4, 5, 6).to(memory_format=lib.channels_last_3d)
        a = lib.randn(2, 3, 4, 5, requires_grad=True)
        a.to(memory_format=lib.channels_last).sum().backward()
        out.append([y.stride(), y.is_contiguous(memory_format=lib.channels_last), x.is_contiguous(
            memory_format=lib.channels_last), p.is_contiguous(memory_format=lib.channels_last), p.clone().stride(),
            w.stride(), x.contiguous(memory_format=lib.channels_last).stride(), y.contiguous().stride(),
            y.is_contiguous(), (y + 1).stride(), z.stride(), a.grad.stride(), bool((y == x).all())])
        with pytest.raises(RuntimeError, match='required rank 4 tensor to use channels_last format'):
            lib.empty(2, 3, 4).contiguous(memory_format=lib.channels_last)
    assert out[0] == out[1]


def test_empty_takes_memory_format_as_torch():
    for lib in (torch, ember):
        x = lib.empty(2, 3, 4, 5, memory_format=lib.channels_last, requires_grad=True)
        assert x.stride() == (60, 1, 15, 3) and x.requires_grad
        assert lib.empty((2, 3, 4, 5, 6), memory_format=lib.channels_last_3d).stride() == (360, 1, 90, 18, 3)
        with pytest.raises(RuntimeError, match='required rank 4 tensor to use channels_last format'):
            lib.empty(2, 3, memory_format=lib.channels_last)


def test_attention_bias_as_torch():
    """pytorch/tutorials' scaled_dot_product_attention_tutorial passes causal_lower_right(L, S) as attn_mask."""
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ((1, 2, 3, 8), (1, 2, 5, 8), (1, 2, 5, 8)))
    res = []
    for lib in (torch, ember):
        from importlib import import_module
        bias = import_module(f'{lib.__name__}.nn.attention.bias')
        r = []
        for b in (bias.causal_lower_right(3, 5), bias.causal_upper_left(3, 5)):
            r.append(b._materialize().numpy())
            r.append(lib.nn.functional.scaled_dot_product_attention(lib.tensor(q), lib.tensor(k), lib.tensor(v),
                                                                    attn_mask=b).numpy())
        assert int(bias.CausalVariant.LOWER_RIGHT) == 2
        res.append(r)
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_fx_experimental_optimization_fuse_as_torch():
    """torch.fx.experimental.optimization.fuse folds Conv/BatchNorm and Linear/BatchNorm1d pairs of an eval model."""
    res = []
    for lib in (torch, ember):
        from importlib import import_module
        opt = import_module(f'{lib.__name__}.fx.experimental.optimization')
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.ReLU(), lib.nn.Flatten(),
                              lib.nn.Linear(64, 5), lib.nn.BatchNorm1d(5), lib.nn.Dropout(0.5))
        for _ in range(2):
            m(lib.randn(8, 3, 6, 6))
        m.eval()
        x = lib.randn(2, 3, 6, 6)
        f = opt.fuse(m)
        r = opt.remove_dropout(m)
        res.append(([type(t).__name__ for t in f.modules()], f(x).detach().numpy(), m(x).detach().numpy(),
                    [n.op for n in r.graph.nodes]))
    assert res[0][0] == res[1][0] and res[0][3] == res[1][3]
    np.testing.assert_allclose(res[1][1], res[1][2], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-5, atol=1e-6)


def test_like_factories_keep_the_layout_as_torch():
    """preserve_format keeps a dense input's strides (channels_last, transposed), memory_format= picks one, and a
    random *_like draws in memory order, so seeded values equal torch's."""
    out = []
    for lib in (torch, ember):
        x = lib.randn(2, 3, 4, 5).to(memory_format=lib.channels_last)
        r = [getattr(lib, f)(x).stride() for f in ('empty_like', 'zeros_like', 'ones_like', 'rand_like', 'randn_like')]
        r += [lib.zeros_like(lib.randn(2, 3, 4, 5), memory_format=lib.channels_last).stride(),
              lib.ones_like(x, memory_format=lib.contiguous_format).stride(), lib.full_like(x, 2.0).stride(),
              lib.zeros_like(x.transpose(0, 1)).stride(), lib.ones_like(lib.randn(3, 4).t()).stride()]
        lib.manual_seed(0)
        r.append(lib.rand_like(x).flatten().tolist())
        out.append(r)
    assert out[0] == out[1]


# --- bfloat16 under autocast (karpathy/build-nanogpt's train_gpt2.py with autocast(bfloat16)) ------------------

def _bf16(lib, a):
    return lib.from_numpy(np.asarray(a, dtype=np.float32)).bfloat16()


def test_layer_and_group_norm_take_bfloat16_like_torch():
    x = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    for name, arg in (('layer_norm', (16,)), ('group_norm', 2)):
        out = {}
        for lib in (torch, ember):
            t = _bf16(lib, x).requires_grad_()
            y = getattr(lib.nn.functional, name)(t, arg)
            (y.float() * lib.arange(16.)).sum().backward()
            out[lib.__name__] = (str(y.dtype).rpartition('.')[2], y.float().detach().numpy(), t.grad.float().numpy())
        assert out['ember'][0] == out['torch'][0] == 'bfloat16'
        np.testing.assert_allclose(out['ember'][1], out['torch'][1], atol=1e-2)
        np.testing.assert_allclose(out['ember'][2], out['torch'][2], rtol=2e-2, atol=0.1)


def test_bfloat16_bias_gradient_and_nll_loss_accumulate_in_float32_like_torch():
    rng = np.random.default_rng(0)
    x, w, g = rng.standard_normal((64, 32)), rng.standard_normal((16, 32)), rng.standard_normal((64, 16))
    logits, target = rng.standard_normal((64, 100)) * 3, rng.integers(0, 100, 64)
    res = {}
    for lib in (torch, ember):
        b = lib.zeros(16, dtype=lib.bfloat16, requires_grad=True)
        lib.nn.functional.linear(_bf16(lib, x), _bf16(lib, w), b).backward(_bf16(lib, g))
        ce = lib.nn.functional.cross_entropy(_bf16(lib, logits), lib.from_numpy(target))
        res[lib.__name__] = b.grad.float().numpy(), ce.item()
    np.testing.assert_array_equal(res['ember'][0], res['torch'][0])        # one rounding of a float32 sum
    assert res['ember'][1] == res['torch'][1]


# --- NYU-DLSP20 notebooks (Atcold): top-level functions with aten's signatures, Module members ------------------

def test_top_level_dropouts_and_norms_take_atens_arguments_like_torch():
    x = np.random.default_rng(0).standard_normal((4, 3, 5)).astype(np.float32)
    w, b = np.array([2., 1., .5], np.float32), np.array([0., 1., -1.], np.float32)
    out = {}
    for lib in (torch, ember):
        T = lib.from_numpy
        with pytest.raises(TypeError, match='train'):
            lib.dropout(T(x), 0.8)                  # train is required, as in aten
        lib.manual_seed(0)
        r = [lib.dropout(T(x), 0.5, True), lib.feature_dropout(T(x), 0.5, True), lib.alpha_dropout(T(x), 0.5, False),
             lib.batch_norm(T(x), T(w), T(b), lib.zeros(3), lib.ones(3), False, 0.1, 1e-5, False),
             lib.instance_norm(T(x), T(w), T(b), None, None, True, 0.1, 1e-5, False)]
        out[lib.__name__] = [t.numpy() for t in r]
    for e, t in zip(out['ember'], out['torch']):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)


def test_module_has_torchs_device_moves_and_call_members():
    m = ember.nn.Linear(2, 3)
    for name in ('xpu', 'ipu', 'mtia', '_wrapped_call_impl', '_slow_forward', 'T_destination'):
        assert hasattr(m, name) == hasattr(torch.nn.Linear(2, 3), name) == True, name
    with pytest.raises(AssertionError, match='Torch not compiled with XPU enabled'):
        m.xpu()
    assert m._compiled_call_impl is None
    assert ember.equal(m._wrapped_call_impl(ember.ones(2)), m(ember.ones(2)))


def test_pin_memory_without_an_accelerator_warns_once_per_process_like_torch():
    import subprocess, sys
    code = ("import {lib}\nfrom {lib}.utils.data import DataLoader, TensorDataset\n"
            "ds = TensorDataset({lib}.ones(4, 2))\n"
            "for _ in DataLoader(ds, batch_size=2, pin_memory=True): pass\n"
            "for _ in DataLoader(ds, batch_size=2, pin_memory=True): pass\n")
    counts = [subprocess.run([sys.executable, '-c', code.format(lib=lib)], capture_output=True, text=True
                             ).stderr.count("'pin_memory' argument is set as true") for lib in ('torch', 'ember')]
    assert counts == [1, 1]
