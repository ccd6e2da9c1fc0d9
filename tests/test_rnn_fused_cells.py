"""The fused recurrent cells (_thnn_fused_lstm_cell, _thnn_fused_gru_cell and their backward kernels
_thnn_fused_lstm_cell_backward_impl, _thnn_fused_gru_cell_backward) against torch.

torch 2.13 declares them but runs them on CUDA only (its CPU dispatch raises NotImplementedError, checked below), so
the oracle is torch's own composite cell on CPU (the ops of its lstm_cell / gru_cell, with the same gate order),
compared for values, workspaces, gradients (first order through the fused backward kernels, second order through the
recorded formulas), forward-mode derivatives, meta shapes (torch's meta functions) and errors. nn.LSTM / nn.GRU use
them per time step; tests/test_nn_rnn.py compares those layers with torch.
"""
import numpy as np
import pytest
import torch

import ember

EA, TA = ember.ops.aten, torch.ops.aten
B, H = 3, 5


def _arrays(k, bias, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    shapes = [(B, k * H), (B, k * H), (B, H)] + ([(k * H,), (k * H,)] if bias else [])
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _both(arrays, grad=True):
    e = [ember.from_numpy(a.copy()).requires_grad_(grad) for a in arrays]
    t = [torch.from_numpy(a.copy()).requires_grad_(grad) for a in arrays]
    return e, t


def _lstm_ref(ig, hg, cx, ib=None, hb=None):
    """torch's composite LSTM step; returns (hy, cy, activated gates)."""
    g = ig + hg if ib is None else ig + hg + ib + hb
    i, f, c, o = g.chunk(4, 1)
    i, f, c, o = i.sigmoid(), f.sigmoid(), c.tanh(), o.sigmoid()
    cy = f * cx + i * c
    return o * cy.tanh(), cy, torch.cat([i, f, c, o], 1)


def _gru_ref(ig, hg, hx, ib=None, hb=None):
    """torch's composite GRU step; returns (hy, workspace r, z, n, hx, hn)."""
    ir, iz, in_ = (ig if ib is None else ig + ib).chunk(3, 1)
    hr, hz, hn = (hg if hb is None else hg + hb).chunk(3, 1)
    r, z = (ir + hr).sigmoid(), (iz + hz).sigmoid()
    n = (in_ + r * hn).tanh()
    return n + z * (hx - n), torch.cat([r, z, n, hx, hn], 1)


def _np(t):
    return t.detach().numpy()


def _close(e, t, tol):
    assert tuple(e.shape) == tuple(t.shape) and e.dtype.name == str(t.dtype)[6:]
    np.testing.assert_allclose(_np(e), _np(t), rtol=tol, atol=tol)


def test_torch_runs_them_on_cuda_only():
    """Why the oracle is the composite: torch's CPU dispatch has no kernel (if a later torch gains one, compare)."""
    a = [torch.from_numpy(x) for x in _arrays(4, False)]
    with pytest.raises(NotImplementedError, match="_thnn_fused_lstm_cell"):
        TA._thnn_fused_lstm_cell(*a)
    a = [torch.from_numpy(x) for x in _arrays(3, False)]
    with pytest.raises(NotImplementedError, match="_thnn_fused_gru_cell"):
        TA._thnn_fused_gru_cell(*a)
    assert not hasattr(torch, '_thnn_fused_lstm_cell') and not hasattr(ember, '_thnn_fused_lstm_cell')


@pytest.mark.parametrize('k,op,ref,n_out', [(4, '_thnn_fused_lstm_cell', _lstm_ref, 3),
                                             (3, '_thnn_fused_gru_cell', _gru_ref, 2)], ids=['lstm', 'gru'])
@pytest.mark.parametrize('bias', [False, True])
@pytest.mark.parametrize('dtype,tol', [(np.float64, 1e-14), (np.float32, 2e-6)])
def test_values_and_workspace(k, op, ref, n_out, bias, dtype, tol):
    e, t = _both(_arrays(k, bias, dtype=dtype), grad=False)
    out = getattr(EA, op).default(*e)
    assert len(out) == n_out
    for x, y in zip(out, ref(*t)):
        _close(x, y, tol)


def _weights(seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((B, H)), rng.standard_normal((B, H))


def _loss(lib, outs, which, w):
    """A weighted sum of the chosen outputs (so each output's gradient differs from 1)."""
    return sum((o * lib.from_numpy(w[k])).sum() for k, o in enumerate(outs) if k in which)


@pytest.mark.parametrize('bias', [False, True])
@pytest.mark.parametrize('which', [(0, 1), (0,), (1,)], ids=['hy+cy', 'hy', 'cy'])
@pytest.mark.parametrize('create_graph', [False, True])
def test_lstm_gradients(bias, which, create_graph):
    """First order (fused backward kernel) and recorded (create_graph) gradients of every input, with one of
    hy's and cy's gradients undefined too; with create_graph, the second derivative of their squared sum."""
    e, t = _both(_arrays(4, bias))
    eo, to = EA._thnn_fused_lstm_cell.default(*e)[:2], _lstm_ref(*t)[:2]
    assert type(eo[0].grad_fn).__name__ == 'ThnnFusedLstmCellBackward0' and eo[0].grad_fn is eo[1].grad_fn
    w = _weights(1)
    ge = ember.autograd.grad(_loss(ember, eo, which, w), e, create_graph=create_graph)
    gt = torch.autograd.grad(_loss(torch, to, which, w), t, create_graph=create_graph)
    assert len(ge) == len(gt) == len(e)
    for x, y in zip(ge, gt):
        _close(x, y, 1e-12)
    if create_graph:
        gge = ember.autograd.grad(sum((g * g).sum() for g in ge), e)
        ggt = torch.autograd.grad(sum((g * g).sum() for g in gt), t)
        for x, y in zip(gge, ggt):
            _close(x, y, 1e-12)


@pytest.mark.parametrize('bias', [False, True])
@pytest.mark.parametrize('create_graph', [False, True])
def test_gru_gradients(bias, create_graph):
    e, t = _both(_arrays(3, bias))
    eo, to = EA._thnn_fused_gru_cell.default(*e)[0], _gru_ref(*t)[0]
    assert type(eo.grad_fn).__name__ == 'ThnnFusedGruCellBackward0'
    w = _weights(2)
    ge = ember.autograd.grad(_loss(ember, [eo], (0,), w), e, create_graph=create_graph)
    gt = torch.autograd.grad(_loss(torch, [to], (0,), w), t, create_graph=create_graph)
    assert len(ge) == len(gt) == len(e)
    for x, y in zip(ge, gt):
        _close(x, y, 1e-12)
    if create_graph:
        gge = ember.autograd.grad(sum((g * g).sum() for g in ge), e)
        ggt = torch.autograd.grad(sum((g * g).sum() for g in gt), t)
        for x, y in zip(gge, ggt):
            _close(x, y, 1e-12)


def test_workspace_is_not_differentiable():
    e, _ = _both(_arrays(4, True))
    assert EA._thnn_fused_lstm_cell.default(*e)[2].requires_grad is False
    e, _ = _both(_arrays(3, True))
    assert EA._thnn_fused_gru_cell.default(*e)[1].requires_grad is False


@pytest.mark.parametrize('defined', [(True, True), (True, False), (False, True)])
def test_lstm_backward_kernel(defined):
    """_thnn_fused_lstm_cell_backward_impl on the saved workspace: the gates' gradient (input and hidden gates
    alike), cx's and the bias's (the gates' summed over the batch), undefined output gradients taken as zeros."""
    arrays = _arrays(4, True)
    e, t = _both(arrays, grad=False)
    hy, cy, ws = EA._thnn_fused_lstm_cell.default(*e)
    w = _weights(3)
    ghy, gcy = (ember.from_numpy(w[k]) if defined[k] else None for k in (0, 1))
    gg, gcx, gb = EA._thnn_fused_lstm_cell_backward_impl.default(ghy, gcy, e[2], cy, ws, True)
    t = [x.requires_grad_() for x in t]
    ref = torch.autograd.grad(_loss(torch, _lstm_ref(*t)[:2], [k for k in (0, 1) if defined[k]], w), t)
    for x, y in zip((gg, gg, gcx, gb, gb), ref):
        _close(x, y, 1e-12)
    assert EA._thnn_fused_lstm_cell_backward_impl.default(ghy, gcy, e[2], cy, ws, False)[2] is None


def test_gru_backward_kernel():
    arrays = _arrays(3, True)
    e, t = _both(arrays, grad=False)
    hy, ws = EA._thnn_fused_gru_cell.default(*e)
    w = _weights(4)
    got = EA._thnn_fused_gru_cell_backward.default(ember.from_numpy(w[0]), ws, True)
    t = [x.requires_grad_() for x in t]
    ref = torch.autograd.grad(_loss(torch, [_gru_ref(*t)[0]], (0,), w), t)
    assert len(got) == len(ref) == 5
    for x, y in zip(got, ref):
        _close(x, y, 1e-12)
    assert EA._thnn_fused_gru_cell_backward.default(ember.from_numpy(w[0]), ws, False)[3:] == (None, None)


@pytest.mark.parametrize('k,op,ref', [(4, '_thnn_fused_lstm_cell', _lstm_ref), (3, '_thnn_fused_gru_cell', _gru_ref)])
def test_forward_derivative(k, op, ref):
    import torch.autograd.forward_ad as tfwd
    import ember.autograd.forward_ad as efwd
    arrays, tangents = _arrays(k, True), _arrays(k, True, seed=7)
    with efwd.dual_level():
        outs = getattr(EA, op).default(*[efwd.make_dual(ember.from_numpy(a), ember.from_numpy(d))
                                         for a, d in zip(arrays, tangents)])
        ge = [efwd.unpack_dual(o).tangent for o in outs[:k - 2]]
    with tfwd.dual_level():
        outs = ref(*[tfwd.make_dual(torch.from_numpy(a), torch.from_numpy(d)) for a, d in zip(arrays, tangents)])
        gt = [tfwd.unpack_dual(o).tangent for o in outs[:k - 2]]
    assert len(ge) == len(gt) == k - 2
    for x, y in zip(ge, gt):
        _close(x, y, 1e-12)


@pytest.mark.parametrize('k,op', [(4, '_thnn_fused_lstm_cell'), (3, '_thnn_fused_gru_cell')])
def test_meta_shapes(k, op):
    """The LSTM's against torch's meta function (given biases: it reads the bias's device even when it is None);
    torch has no meta function for the GRU's, so its against ember's CPU results."""
    em = [ember.empty(a.shape, device='meta') for a in _arrays(k, True)]
    got = getattr(EA, op).default(*em)
    if k == 4:
        want = getattr(TA, op)(*[torch.empty(a.shape, device='meta') for a in _arrays(k, True)])
    else:
        want = getattr(EA, op).default(*[ember.from_numpy(a) for a in _arrays(k, True)])
    assert len(got) == len(want) == k - 1
    assert [tuple(x.shape) for x in got] == [tuple(y.shape) for y in want]
    assert all(x.device.type == 'meta' for x in got)


@pytest.mark.parametrize('shapes', [[(B, 4 * H), (B, 4 * H - 1), (B, H)], [(4 * H,), (4 * H,), (H,)],
                                    [(B, 4 * H), (B, 4 * H), (B, H + 1)], [(B, 4 * H), (B, 4 * H), (B, H), (4 * H + 1,),
                                                                           (4 * H + 1,)]])
def test_lstm_shape_errors_as_torch(shapes):
    """Sizes torch's checks refuse (its meta function, the same checks as its CUDA kernel) raise RuntimeError."""
    with pytest.raises(RuntimeError):
        TA._thnn_fused_lstm_cell(*[torch.empty(s, device='meta') for s in shapes])
    with pytest.raises(RuntimeError):
        EA._thnn_fused_lstm_cell.default(*[ember.empty(s) for s in shapes])


def test_layers_record_one_fused_node_per_step():
    """nn.LSTM / nn.GRU in float32 run the fused cells; half precision keeps torch's CPU op-by-op steps, and the
    cells (LSTMCell) keep torch's CPU graph, MulBackward0 at hy."""
    x = ember.randn(3, 2, 4)
    for cls, name in ((ember.nn.LSTM, 'ThnnFusedLstmCellBackward0'), (ember.nn.GRU, 'ThnnFusedGruCellBackward0')):
        out = cls(4, 5)(x)[0]
        seen, stack = set(), [out.grad_fn]
        while stack:
            f = stack.pop()
            if f is not None and f not in seen:
                seen.add(f)
                stack.extend(g for g, _ in f.next_functions)
        assert sum(type(f).__name__ == name for f in seen) == 3
    m = ember.nn.LSTM(4, 5).to(ember.bfloat16)
    out = m(x.to(ember.bfloat16))[0]
    assert out.dtype == ember.bfloat16 and 'Fused' not in repr(out.grad_fn.next_functions)
    h = ember.nn.LSTMCell(4, 5)(x[0])[0]
    th = torch.nn.LSTMCell(4, 5)(torch.randn(2, 4))[0]
    assert type(h.grad_fn).__name__ == type(th.grad_fn).__name__ == 'MulBackward0'


@pytest.mark.parametrize('name', ['LSTM', 'GRU'])
def test_float32_layers_match_torch(name):
    """float32 layers with the fused steps against torch's (outputs, final states, every gradient)."""
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(6, 8, num_layers=2, bidirectional=True)
    em = getattr(ember.nn, name)(6, 8, num_layers=2, bidirectional=True)
    em.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    xa = np.random.default_rng(5).standard_normal((7, 4, 6)).astype(np.float32)
    xt, xe = torch.from_numpy(xa).requires_grad_(), ember.from_numpy(xa.copy()).requires_grad_()
    ot, st = tm(xt)
    oe, se = em(xe)
    st, se = (st if name == 'LSTM' else (st,)), (se if name == 'LSTM' else (se,))
    for x, y in zip((oe,) + tuple(se), (ot,) + tuple(st)):
        _close(x, y, 2e-5)
    (ot.square().sum() + sum(s.sum() for s in st)).backward()
    (oe.square().sum() + sum(s.sum() for s in se)).backward()
    _close(xe.grad, xt.grad, 2e-5)
    pe = dict(em.named_parameters())
    for k, p in tm.named_parameters():
        _close(pe[k].grad, p.grad, 5e-5)


@pytest.mark.parametrize('threads', [1, 2])
def test_large_batches_split_over_threads_give_the_same_values(threads, monkeypatch):
    """A step over 4096 x 8 features is cut into row blocks for ember's intra-op threads: values and gradients
    are torch's whatever the thread count (and bit for bit the one-thread ones)."""
    from ember._backends.cpu import _split, rnn_cells
    monkeypatch.setattr(_split, 'ADAPTIVE', False)      # always split above the threshold
    splits = []
    monkeypatch.setattr(rnn_cells, 'parallel_for', lambda n, fn, g: (splits.append(n), fn(0, n // 2), fn(n // 2, n)))
    rng = np.random.default_rng(9)
    n, h, old = 4096, 8, ember.get_num_threads()
    results = []
    try:
        for nt in (1, threads):
            ember.set_num_threads(nt)
            got = []
            for k, op, ref in ((4, '_thnn_fused_lstm_cell', _lstm_ref), (3, '_thnn_fused_gru_cell', _gru_ref)):
                arrays = [rng.standard_normal(s).astype(np.float32) for s in ((n, k * h), (n, k * h), (n, h))]
                rng = np.random.default_rng(9)
                e, t = _both(arrays)
                eo, to = getattr(EA, op).default(*e), ref(*t)
                w = [np.linspace(-1, 1, n * h, dtype=np.float32).reshape(n, h)] * 2
                ge = ember.autograd.grad(_loss(ember, eo[:k - 2], range(k - 2), w), e)
                gt = torch.autograd.grad(_loss(torch, to[:k - 2], range(k - 2), w), t)
                for x, y in zip(list(eo) + list(ge), list(to) + list(gt)):
                    _close(x, y, 2e-6)
                got += [_np(x) for x in list(eo) + list(ge)]
            results.append(got)
    finally:
        ember.set_num_threads(old)
    assert len(results[0]) == len(results[1]) == 11
    assert len(splits) == (4 if threads == 2 else 0)       # two forward and two backward kernels split
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_overflowing_gates_give_the_limits_without_warnings():
    """exp(-x) overflows to inf for very negative gates: sigmoid 0, as torch gives, and no RuntimeWarning."""
    import warnings
    vals = np.array([[-1000., 1000., -1000., 1000., 0.5, -0.5, 1000., -1000.]])
    for k, op, ref in ((4, '_thnn_fused_lstm_cell', _lstm_ref), (3, '_thnn_fused_gru_cell', _gru_ref)):
        arrays = [vals[:, :2 * k], -vals[:, :2 * k], np.ones((1, 2))]
        e, t = _both(arrays, grad=False)
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            got = getattr(EA, op).default(*e)
        for x, y in zip(got, ref(*t)):
            _close(x, y, 1e-15)


@pytest.mark.parametrize('k,op', [(4, '_thnn_fused_lstm_cell'), (3, '_thnn_fused_gru_cell')])
@pytest.mark.parametrize('bias', [False, True])
def test_decompositions_give_the_kernels_values(k, op, bias):
    """The decompositions exporters use (ONNX has no fused cell) give every output of the kernels, workspace too."""
    from ember._decomp import decomposition_table
    e, _ = _both(_arrays(k, bias), grad=False)
    got, want = decomposition_table[getattr(EA, op).default](*e), getattr(EA, op).default(*e)
    assert len(got) == len(want) == k - 1
    for x, y in zip(got, want):
        np.testing.assert_allclose(_np(x), _np(y), rtol=1e-14, atol=1e-14)
