"""nn and autograd gaps found by running published libraries: the legacy CrossMapLRN2d (lightly), per-sample
gradients through ExpandedWeights (opacus), and the saved attributes of backward nodes (torch-pruning)."""
import numpy as np
import pytest
import torch

import ember


# --- CrossMapLRN2d ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize('shape,size', [((2, 7, 3, 4), 5), ((2, 3, 2, 2), 3), ((1, 6, 2, 3), 2), ((2, 9, 1, 2), 4),
                                        ((1, 2, 2, 2), 7)])
def test_cross_map_lrn2d_values_and_torch_gradient(shape, size):
    # torch's backward is its own formula (a window other than the forward's): compare the gradient with torch's
    rng = np.random.default_rng(0)
    x, g = rng.standard_normal(shape).astype(np.float32), rng.standard_normal(shape).astype(np.float32)
    got = []
    for lib in (torch, ember):
        m = lib.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=2)
        t = lib.tensor(x, requires_grad=True)
        out = m(t)
        out.backward(lib.tensor(g))
        got.append((out.detach().numpy(), t.grad.numpy(), repr(m), out.grad_fn.name()))
    np.testing.assert_allclose(got[1][0], got[0][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-5, atol=1e-6)
    assert got[1][2:] == got[0][2:]


def test_cross_map_lrn2d_defaults_paths_and_errors():
    assert ember.nn.modules.CrossMapLRN2d is ember.nn.CrossMapLRN2d
    assert ember.nn.modules.normalization.CrossMapLRN2d is ember.nn.CrossMapLRN2d
    m, tm = ember.nn.CrossMapLRN2d(3), torch.nn.CrossMapLRN2d(3)
    assert (m.size, m.alpha, m.beta, m.k) == (tm.size, tm.alpha, tm.beta, tm.k)
    x = np.random.default_rng(1).standard_normal((2, 5, 3, 3)).astype(np.float32)
    np.testing.assert_allclose(m(ember.tensor(x)).numpy(), tm(torch.tensor(x)).numpy(), rtol=1e-5)
    for lib, mod in ((torch, tm), (ember, m)):
        with pytest.raises(ValueError) as e:
            mod(lib.ones(2, 3, 4))
        assert str(e.value) == "CrossMapLRN2d: Expected input to be 4D, got 3D instead."


# --- call_for_per_sample_grads (ExpandedWeights) ----------------------------------------------------------------

def _per_sample_model(lib, kind):
    nn = lib.nn
    models = {
        'linear': lambda: (nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)), (5, 4)),
        'conv1d': lambda: (nn.Sequential(nn.Conv1d(2, 3, 3, padding=1), nn.Tanh()), (4, 2, 6)),
        'conv2d_groupnorm': lambda: (nn.Sequential(nn.Conv2d(2, 3, 3, stride=2), nn.GroupNorm(3, 3)), (3, 2, 5, 5)),
        'conv3d': lambda: (nn.Conv3d(2, 2, 2), (3, 2, 3, 3, 3)),
        'sequence_layernorm': lambda: (nn.Sequential(nn.Linear(4, 6), nn.LayerNorm(6)), (5, 2, 4)),
        'instancenorm': lambda: (nn.Sequential(nn.Conv2d(2, 3, 1), nn.InstanceNorm2d(3, affine=True,
                                                                                        track_running_stats=True)),
                                 (3, 2, 4, 4)),
        'embedding': lambda: (nn.Sequential(nn.Embedding(10, 3), nn.Flatten(), nn.Linear(6, 2)), (4, 2)),
    }
    model, shape = models[kind]()
    rng = np.random.default_rng(3)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    x = rng.integers(0, 10, shape) if kind == 'embedding' else rng.standard_normal(shape).astype(np.float32)
    return model, x


@pytest.mark.parametrize('kind', ['linear', 'conv1d', 'conv2d_groupnorm', 'conv3d', 'sequence_layernorm',
                                  'instancenorm', 'embedding'])
@pytest.mark.parametrize('reduction', ['sum', 'mean'])
def test_per_sample_grads_match_torch(kind, reduction):
    from torch.nn.utils._per_sample_grad import call_for_per_sample_grads as torch_call
    from ember.nn.utils._per_sample_grad import call_for_per_sample_grads as ember_call
    got = []
    for lib, call in ((torch, torch_call), (ember, ember_call)):
        model, x = _per_sample_model(lib, kind)
        x = lib.tensor(x, requires_grad=kind != 'embedding')
        out = call(model, loss_reduction=reduction)(x)
        loss = (out ** 3).mean() if reduction == 'mean' else (out ** 3).sum()     # not constant after a norm
        loss.backward()
        params = dict(model.named_parameters())
        assert params and all(p.grad is None for p in params.values())
        got.append(({n: p.grad_sample.detach().numpy() for n, p in params.items()},
                    None if x.grad is None else x.grad.numpy(),
                    [b.numpy() for b in model.buffers() if b.is_floating_point()]))
    (want, want_x, want_bufs), (have, have_x, have_bufs) = got
    assert sorted(have) == sorted(want)
    scale = max(np.abs(w).max() for w in want.values())     # a bias before a norm has gradient 0 (float noise)
    for n in want:
        assert have[n].shape == want[n].shape
        np.testing.assert_allclose(have[n], want[n], rtol=1e-4, atol=1e-5 * scale)
    assert (have_x is None) == (want_x is None)
    if want_x is not None:
        np.testing.assert_allclose(have_x, want_x, rtol=1e-4, atol=1e-5)
    assert len(have_bufs) == len(want_bufs)     # running statistics updated once, as torch's
    for h, w in zip(have_bufs, want_bufs):
        np.testing.assert_allclose(h, w, rtol=1e-5, atol=1e-6)


def _raises_as_torch(make):
    from torch.nn.utils._per_sample_grad import call_for_per_sample_grads as torch_call
    from ember.nn.utils._per_sample_grad import call_for_per_sample_grads as ember_call
    errors = []
    for lib, call in ((torch, torch_call), (ember, ember_call)):
        with pytest.raises(Exception) as e:
            make(lib, call)
        errors.append((type(e.value).__name__, str(e.value)))
    assert errors[1] == errors[0]


@pytest.mark.parametrize('case', ['batchnorm', 'prelu', 'reduction', 'batch_size', 'mismatch', 'twice'])
def test_per_sample_grads_errors_match_torch(case):
    def make(lib, call):
        nn = lib.nn
        if case == 'batchnorm':
            call(nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3)))(lib.randn(4, 3)).sum().backward()
        elif case == 'prelu':
            call(nn.PReLU())(lib.randn(4, 3))
        elif case == 'reduction':
            call(nn.Linear(2, 2), loss_reduction='none')
        elif case == 'batch_size':
            call(nn.Linear(2, 2), batch_size=0)
        elif case == 'mismatch':
            call(nn.Linear(2, 2), batch_size=3)(lib.randn(4, 2))
        else:
            m = nn.Linear(2, 2)
            call(m)(lib.randn(4, 2)).sum().backward()
            call(m)
    if case == 'twice':     # torch's message names the parameter's repr: compare the start
        from torch.nn.utils._per_sample_grad import call_for_per_sample_grads as torch_call
        from ember.nn.utils._per_sample_grad import call_for_per_sample_grads as ember_call
        for lib, call in ((torch, torch_call), (ember, ember_call)):
            with pytest.raises(RuntimeError, match='^Current Expanded Weights accumulates the gradients'):
                make(lib, call)
        return
    _raises_as_torch(make)


# --- saved attributes of backward nodes -------------------------------------------------------------------------

_NODE_CASES = {
    'split': lambda x: x.split(2, 1)[0],
    'split_sizes': lambda x: x.split([1, 2, 3], 1)[1],
    'split_with_sizes': lambda x: x.split_with_sizes([4, 2], 1)[0],
    'chunk': lambda x: x.chunk(3, 1)[2],
    'chunk_empty': lambda x: x[:, :0].chunk(3, 1)[0],
    'unbind': lambda x: x.unbind(2)[0],
    'expand': lambda x: x[:, :1].expand(2, 4, 3),
    'expand_as': lambda x: x[:, :1].expand_as(x),
    'view': lambda x: x.view(12, 3),
    'reshape': lambda x: x.reshape(3, 12),
    'flatten': lambda x: x.flatten(),
    'slice': lambda x: x[:, 1:3],
    'narrow': lambda x: x.narrow(1, 2, 3),
    'select': lambda x: x[:, 1],
    'permute': lambda x: x.permute(2, 0, 1),
    'transpose': lambda x: x.transpose(0, 1),
    'unsqueeze': lambda x: x.unsqueeze(1),
    'mul': lambda x: x * x,
}


def _saved_names(node):
    return [a for a in dir(node) if a.startswith('_saved')]


@pytest.mark.parametrize('case', sorted(_NODE_CASES))
def test_node_saved_attributes_are_torchs(case):
    data = np.random.default_rng(0).standard_normal((2, 6, 3)).astype(np.float32)
    nodes = [_NODE_CASES[case](lib.tensor(data, requires_grad=True)).grad_fn for lib in (torch, ember)]
    want, have = (_saved_names(n) for n in nodes)
    assert (nodes[1].name(), have) == (nodes[0].name(), want)
    for attr in want:       # the values too, tensors as arrays
        w, h = getattr(nodes[0], attr), getattr(nodes[1], attr)
        if isinstance(w, torch.Tensor):
            np.testing.assert_array_equal(h.detach().numpy(), w.detach().numpy())
        else:
            assert tuple(h) == tuple(w) if isinstance(w, (tuple, list)) else h == w


@pytest.mark.parametrize('case', ['view', 'slice', 'expand', 'split', 'select'])
def test_nodes_have_no_unsymbolic_sizes(case):
    # torch shows a tensor's sizes only as _saved_self_sym_sizes; torch-pruning branches on which name exists
    for lib in (torch, ember):
        node = _NODE_CASES[case](lib.randn(2, 6, 3, requires_grad=True)).grad_fn
        assert hasattr(node, '_saved_self_sym_sizes')
        assert not hasattr(node, '_saved_self_sizes')
        assert not hasattr(node, '_saved_self_dtype')


def test_mean_nodes_show_sizes_symbolically():
    for lib in (torch, ember):
        x = lib.randn(2, 6, 3, requires_grad=True)
        for node in (x.mean().grad_fn, x.mean(1).grad_fn):
            assert tuple(node._saved_self_sym_sizes) == (2, 6, 3)
            assert not hasattr(node, '_saved_self_sizes')


def test_split_node_values_after_backward():
    # the sizes and arguments are not tensors: they stay readable after the graph is freed, as torch's do
    got = []
    for lib in (torch, ember):
        x = lib.randn(2, 6, 3, requires_grad=True)
        piece = x.split(4, 1)[1]
        piece.sum().backward()
        node = piece.grad_fn
        got.append((node._saved_dim, tuple(node._saved_self_sym_sizes), node._saved_split_size, x.grad.sum().item()))
    assert got[1] == got[0]
