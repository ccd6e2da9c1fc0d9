"""The autograd graph of F.linear / nn.Linear and of the in-place view operators has torch's structure: the whole
breadth-first walk along ``next_functions`` (node names, None edges, and which leaf each AccumulateGrad
accumulates into), the saved attributes libraries read (torch-pruning's DependencyGraph, torchviz), what node
hooks see, and the gradients (NOTE [linear's graph] in ember/_ops/linear_graph.py)."""
import numpy as np
import pytest
import torch

import ember


def walk(fn, leaves):
    """Breadth-first names from ``fn`` along next_functions, each node once; an AccumulateGrad is named with the
    position of its ``.variable`` among ``leaves`` (by identity), None edges are kept."""
    out, queue, seen = [], [fn], set()
    while queue:
        f = queue.pop(0)
        if f is None:
            out.append(None)
            continue
        name = f.name()
        if 'AccumulateGrad' in name:
            name = ('AccumulateGrad', [i for i, t in enumerate(leaves) if t is f.variable])
        out.append(name)
        if id(f) not in seen:
            seen.add(id(f))
            queue.extend(g for g, _ in f.next_functions)
    return out


def _make(lib, xshape, wshape, bshape, dtype, grads, seed):
    rng = np.random.default_rng(seed)
    dt = getattr(lib, dtype)
    mk = lambda s, rg: lib.tensor(rng.standard_normal(s).astype(np.float32)).to(dt).requires_grad_(rg)
    x = mk(xshape, bool(grads[0]))
    w = mk(wshape, bool(grads[1]))
    b = None if bshape is None else mk(bshape, bool(grads[2]))
    return x, w, b


LINEAR = {
    # name: (input shape, weight shape, bias shape or None, which of x, w, b require grad, input transform)
    'vector': ((4,), (5, 4), None, (1, 1, 1), None),
    'vector_bias': ((4,), (5, 4), (5,), (1, 1, 1), None),
    'matrix': ((3, 4), (5, 4), None, (1, 1, 1), None),
    'matrix_bias': ((3, 4), (5, 4), (5,), (1, 1, 1), None),
    'batch3': ((2, 3, 4), (5, 4), None, (1, 1, 1), None),
    'batch3_bias': ((2, 3, 4), (5, 4), (5,), (1, 1, 1), None),
    'batch4': ((2, 2, 3, 4), (5, 4), None, (1, 1, 1), None),
    'batch4_bias': ((2, 2, 3, 4), (5, 4), (5,), (1, 1, 1), None),
    'data_input': ((3, 4), (5, 4), (5,), (0, 1, 1), None),
    'data_input_batch3': ((2, 3, 4), (5, 4), (5,), (0, 1, 1), None),
    'data_input_batch3_nobias': ((2, 3, 4), (5, 4), None, (0, 1, 1), None),
    'data_input_vector': ((4,), (5, 4), None, (0, 1, 1), None),
    'frozen_weight': ((3, 4), (5, 4), (5,), (1, 0, 1), None),
    'frozen_weight_nobias': ((3, 4), (5, 4), None, (1, 0, 0), None),
    'frozen_weight_batch3': ((2, 3, 4), (5, 4), (5,), (1, 0, 0), None),
    'only_bias_batch3': ((2, 3, 4), (5, 4), (5,), (0, 0, 1), None),
    'matrix_bias_2d': ((3, 4), (5, 4), (3, 5), (1, 1, 1), None),
    'matrix_bias_0d': ((3, 4), (5, 4), (), (1, 1, 1), None),
    'transposed_input': ((4, 3), (5, 4), (5,), (1, 1, 1), lambda t: t.t()),
    'transposed_weight': ((3, 4), (4, 5), (5,), (1, 1, 1), 'wt'),
    'nonleaf_weight': ((2, 3, 4), (5, 4), (5,), (1, 1, 1), 'w2'),
    'empty_rows': ((0, 4), (5, 4), (5,), (1, 1, 1), None),
    'empty_batch3': ((2, 0, 4), (5, 4), (5,), (1, 1, 1), None),
}


def _linear_case(lib, name, dtype='float32'):
    xs, ws, bs, grads, how = LINEAR[name]
    x, w, b = _make(lib, xs, ws, bs, dtype, grads, seed=len(name))
    xin, win = x, w
    if callable(how):
        xin = how(x)
    elif how == 'wt':
        win = w.t()
    elif how == 'w2':
        win = w * 2
    return (x, w, b), lib.nn.functional.linear(xin, win, b)


@pytest.mark.parametrize('dtype', ['float32', 'bfloat16'])
@pytest.mark.parametrize('name', sorted(LINEAR))
def test_linear_graph_matches_torch(name, dtype):
    (tleaves, t), (eleaves, e) = _linear_case(torch, name, dtype), _linear_case(ember, name, dtype)
    tw = walk(t.grad_fn, tleaves)
    assert walk(e.grad_fn, eleaves) == tw
    assert any(n == 'TBackward0' for n in tw) == (LINEAR[name][3][1] == 1)      # the case tests what it says
    g = np.random.default_rng(1).standard_normal(tuple(t.shape)).astype(np.float32)
    want = [lf for lf in tleaves if lf is not None and lf.requires_grad]
    tg = torch.autograd.grad(t, want, torch.tensor(g).to(t.dtype))
    eg = ember.autograd.grad(e, [lf for lf in eleaves if lf is not None and lf.requires_grad],
                             ember.tensor(g).to(e.dtype))
    assert len(eg) == len(tg) >= 1
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == 'bfloat16' else dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(e.detach().float().numpy(), t.detach().float().numpy(), **tol)
    for a, b in zip(eg, tg):
        assert tuple(a.shape) == tuple(b.shape) and a.dtype == getattr(ember, dtype)
        np.testing.assert_allclose(a.float().numpy(), b.float().numpy(), **tol)


@pytest.mark.parametrize('xshape', [(4,), (3, 4), (2, 3, 4), (2, 2, 3, 4)])
@pytest.mark.parametrize('bias', [True, False])
@pytest.mark.parametrize('dtype', ['float32', 'bfloat16', 'float64'])
def test_linear_gradients_are_the_fused_backward(xshape, bias, dtype):
    """The nodes around the product only reshape and transpose: the gradients are linear_backward's, bit for
    bit, and the first gradient of a leaf is not a view (AccumulateGrad takes it, as torch's does)."""
    x, w, b = _make(ember, xshape, (5, xshape[-1]), (5,) if bias else None, dtype, (1, 1, 1), seed=3)
    y = ember.nn.functional.linear(x, w, b)
    g = ember.randn(tuple(y.shape)).to(y.dtype)
    y.backward(g)
    gx, gw, gb = ember.ops.aten.linear_backward(x.detach(), g, w.detach(), [True, True, True])
    assert np.array_equal(x.grad.float().numpy(), gx.float().numpy())
    assert np.array_equal(w.grad.float().numpy(), gw.float().numpy())
    if bias:
        assert np.array_equal(b.grad.float().numpy(), gb.float().numpy())
    assert not w.grad._is_view() and not x.grad._is_view() and w.grad.is_contiguous()


def _saved(node):
    out = {}
    for a in dir(node):
        if a.startswith('_saved_'):
            v = getattr(node, a)
            out[a] = ('tensor', tuple(v.shape), tuple(v.stride())) if hasattr(v, 'stride') else v
    return out


@pytest.mark.parametrize('name', ['matrix', 'matrix_bias', 'batch3', 'batch3_bias', 'vector', 'vector_bias',
                                  'data_input', 'frozen_weight', 'frozen_weight_nobias', 'transposed_input'])
def test_linear_saved_attributes_match_torch(name):
    """Every node's ``_saved_*`` attributes (the names dir() lists and their values; tensors by shape and
    strides), along the breadth-first walk."""
    (tl, t), (el, e) = _linear_case(torch, name), _linear_case(ember, name)

    def nodes(fn):
        out, queue = [], [fn]
        while queue:
            f = queue.pop(0)
            if f is not None and 'AccumulateGrad' not in f.name():
                out.append(f)
                queue.extend(g for g, _ in f.next_functions)
        return out
    tn, en = nodes(t.grad_fn), nodes(e.grad_fn)
    assert [f.name() for f in en] == [f.name() for f in tn] and len(tn) >= 1
    for a, b in zip(en, tn):
        assert _saved(a) == _saved(b), a.name()
    if name == 'matrix':        # torch's mm saves the input itself
        assert e.grad_fn._saved_self is el[0] and t.grad_fn._saved_self is tl[0]


def test_linear_saved_tensors_freed_after_backward():
    for lib in (torch, ember):
        (x, w, b), y = _linear_case(lib, 'batch3_bias')
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        node = y.grad_fn.next_functions[0][0]
        assert node.name() == 'AddmmBackward0'
        with pytest.raises(RuntimeError, match='Trying to backward through the graph a second time'):
            y.sum().backward()
        with pytest.raises(RuntimeError, match='after they have already been freed'):
            node._saved_mat1
        assert tuple(node._saved_mat1_sym_sizes) == (6, 4)


def test_linear_node_hooks_see_torchs_gradients():
    """A hook on AddmmBackward0 (as torch-pruning's or a user's) sees torch's shapes: the output's rows in, and
    (bias, mat1, mat2) out, mat2's gradient transposed."""
    seen = {}
    for lib in (torch, ember):
        (x, w, b), y = _linear_case(lib, 'batch3_bias')
        addmm = y.grad_fn.next_functions[0][0]
        got = []
        addmm.register_hook(lambda gi, go: got.append(([tuple(g.shape) for g in gi], [tuple(g.shape) for g in go])))
        y.sum().backward()
        seen[lib] = (got, np.allclose(w.grad.numpy(), (x.detach().reshape(6, 4).t() @ lib.ones(6, 5)).t().numpy()))
    assert seen[ember] == seen[torch]
    assert seen[ember][0] == [([(5,), (6, 4), (4, 5)], [(6, 5)])] and seen[ember][1]


def test_linear_double_backward_matches_torch():
    res = {}
    for lib in (torch, ember):
        (x, w, b), y = _linear_case(lib, 'batch3_bias')
        gx, gw = lib.autograd.grad((y * y).sum(), (x, w), create_graph=True)
        res[lib] = [g.detach().numpy() for g in lib.autograd.grad((gx * gx).sum() + (gw ** 3).sum(), (x, w, b))]
    for a, b in zip(res[ember], res[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize('lib', [torch, ember], ids=['torch', 'ember'])
def test_mlp_graph_of_nn_linear(lib):
    """nn.Linear layers: the graph torch-pruning walks from a loss (each weight behind its TBackward0)."""
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(6, 5), lib.nn.ReLU(), lib.nn.Linear(5, 3))
    loss = model(lib.randn(4, 6)).sum()
    params = list(model.parameters())
    assert walk(loss.grad_fn, params) == [
        'SumBackward0', 'AddmmBackward0', ('AccumulateGrad', [3]), 'ReluBackward0', 'TBackward0',
        'AddmmBackward0', ('AccumulateGrad', [2]), ('AccumulateGrad', [1]), None, 'TBackward0',
        ('AccumulateGrad', [0])]


# torch's composite is not one product of rows here: the formulas' node stands alone under torch's top name
RARE = {
    'bias_0d_batch3': ((2, 3, 4), (5, 4), ()),
    'bias_2d_batch3': ((2, 3, 4), (5, 4), (3, 5)),
    'weight_1d': ((3, 4), (4,), None),
    'weight_1d_vector': ((4,), (4,), None),
    'weight_1d_batch3': ((2, 3, 4), (4,), None),
}


@pytest.mark.parametrize('name', sorted(RARE))
def test_linear_other_calls_name_torchs_top_node(name):
    xs, ws, bs = RARE[name]
    got = []
    for lib in (torch, ember):
        x, w, b = _make(lib, xs, ws, bs, 'float32', (1, 1, 1), seed=2)
        y = lib.nn.functional.linear(x, w, b)
        y.sum().backward()
        got.append((y.grad_fn.name(), w.grad.numpy(), x.grad.numpy()))
    assert got[0][0] == got[1][0]
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1][2], got[0][2], rtol=1e-5, atol=1e-5)


INPLACE_VIEWS = {
    'squeeze_()': lambda y: y.squeeze_(), 'squeeze_(0)': lambda y: y.squeeze_(0),
    'squeeze_((0,2))': lambda y: y.squeeze_((0, 2)), 'squeeze()': lambda y: y.squeeze(),
    'squeeze(0)': lambda y: y.squeeze(0), 'squeeze((0,2))': lambda y: y.squeeze((0, 2)),
    'unsqueeze_(1)': lambda y: y.unsqueeze_(1), 'unsqueeze(1)': lambda y: y.unsqueeze(1),
    't_()': lambda y: y[0, :, 0].unsqueeze(1).t_(), 't()': lambda y: y[0].t(),
    'transpose_(0,1)': lambda y: y.transpose_(0, 1), 'transpose(0,1)': lambda y: y.transpose(0, 1),
    'swapdims_(0,1)': lambda y: y.swapdims_(0, 1), 'swapaxes_(0,1)': lambda y: y.swapaxes_(0, 1),
    'squeeze_ of a view': lambda y: y.view(-1)[:1].squeeze_(),
}


@pytest.mark.parametrize('call', sorted(INPLACE_VIEWS))
def test_inplace_view_node_names_match_torch(call):
    """torch's in-place view operators record their own nodes (SqueezeBackward4 for squeeze_(0), TBackward1,
    TransposeBackward1, ...), with the out-of-place node's edges and saved values."""
    got = []
    for lib in (torch, ember):
        x = lib.randn(1, 3, 1, requires_grad=True)
        y = x * 2
        r = INPLACE_VIEWS[call](y)
        fn = r.grad_fn
        r.sum().backward()
        got.append((type(fn).__name__, fn.name(), walk(fn, [x]), x.grad.tolist()))
    assert got[1] == got[0]


def test_inplace_view_node_keeps_the_view_nodes_saved_values():
    for lib in (torch, ember):
        y = lib.randn(2, 3, requires_grad=True) * 1
        y.transpose_(0, 1)
        assert y.grad_fn.name() == 'TransposeBackward1'
        assert (y.grad_fn._saved_dim0, y.grad_fn._saved_dim1) == (0, 1)
        y.unsqueeze_(2)
        assert y.grad_fn.name() == 'UnsqueezeBackward1' and y.grad_fn._saved_dim == 2


@pytest.mark.parametrize('call', ['linalg', 'function', 'method'])
@pytest.mark.parametrize('shape,dtype', [((3, 3), 'float64'), ((2, 4, 4), 'float64'), ((3, 3), 'complex128')])
def test_matrix_exp_records_torchs_node(call, shape, dtype):
    """torch.linalg.matrix_exp records one LinalgMatrixExpBackward0 (saving its input), whose gradient is the
    adjoint differential; first and second derivatives match torch's."""
    got = []
    for lib in (torch, ember):
        a = np.random.default_rng(0).standard_normal(shape) * 1.5
        A = lib.tensor(a if dtype == 'float64' else a + 0.5j * a[::-1].copy(), requires_grad=True)
        fn = {'linalg': lib.linalg.matrix_exp, 'function': lib.matrix_exp, 'method': lambda t: t.matrix_exp()}[call]
        E = fn(A)
        node = E.grad_fn
        head = (node.name(), walk(node, [A]), node._saved_self is A)
        g, = lib.autograd.grad((E * E.conj()).real.sum() if dtype != 'float64' else (E * E).sum(), A,
                               create_graph=True)
        gg, = lib.autograd.grad((g.abs() ** 2).sum(), A)
        got.append(head + (E.detach().numpy(), g.detach().numpy(), gg.numpy()))
    assert got[1][:3] == got[0][:3] == ('LinalgMatrixExpBackward0', ['LinalgMatrixExpBackward0',
                                                                      ('AccumulateGrad', [0])], True)
    for a, b in zip(got[1][3:], got[0][3:]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)
