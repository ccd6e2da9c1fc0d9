"""The autograd graphs ember records have torch's shape: node names, ``next_functions`` order and nesting, and the
saved attributes libraries read (torch-pruning's DependencyGraph, torchviz walk ``loss.grad_fn``), for the
layers whose graphs ember used to record differently: GroupNorm (one NativeGroupNormBackward0), PReLU
(PreluKernelBackward0 with the weight through a ViewBackward0), adaptive average pooling to 1x1 (torch's
composite computes a mean: MeanBackward1), and the arguments split nodes save. Values and gradients are compared
too."""
import numpy as np
import pytest
import torch

import ember


def walk(fn):
    """The graph under ``fn`` as nested (name, [children]); None for an input that needs no gradient."""
    if fn is None:
        return None
    return (fn.name(), [walk(f) for f, _ in fn.next_functions])


def names(fn, out=None):
    """The node names of a recursive walk, depth first."""
    out = [] if out is None else out
    out.append(None if fn is None else fn.name())
    if fn is not None:
        for f, _ in fn.next_functions:
            names(f, out)
    return out


def _inputs(lib, shapes, seed):
    rng = np.random.default_rng(seed)
    return [lib.tensor(rng.standard_normal(s).astype(np.float64), requires_grad=True) for s in shapes]


CASES = {
    'group_norm_affine': ([(2, 4, 3, 3), (4,), (4,)], lambda lib, x, w, b: lib.nn.functional.group_norm(x, 2, w, b)),
    'group_norm_plain': ([(2, 6, 5)], lambda lib, x: lib.nn.functional.group_norm(x, 3)),
    'group_norm_weight_only': ([(3, 4), (4,)], lambda lib, x, w: lib.nn.functional.group_norm(x, 4, w)),
    'group_norm_channels_last': ([(2, 4, 3, 3), (4,), (4,)], lambda lib, x, w, b: lib.nn.functional.group_norm(
        x.contiguous(memory_format=lib.channels_last), 2, w, b)),
    'group_norm_then_split': ([(2, 12, 4, 4), (12,), (12,)], lambda lib, x, w, b: lib.cat(
        lib.split(lib.nn.functional.group_norm(x, 4, w, b), [6, 6], 1), 1).mean((2, 3))),
    'prelu_channels': ([(2, 4, 3, 3), (4,)], lambda lib, x, w: lib.nn.functional.prelu(x, w)),
    'prelu_one_weight': ([(2, 4, 3), (1,)], lambda lib, x, w: lib.nn.functional.prelu(x, w)),
    'prelu_vector_one_weight': ([(5,), (1,)], lambda lib, x, w: lib.nn.functional.prelu(x, w)),
    'prelu_scalar_weight': ([(3, 2), ()], lambda lib, x, w: lib.nn.functional.prelu(x, w)),
    'prelu_matrix': ([(2, 3), (3,)], lambda lib, x, w: lib.nn.functional.prelu(x, w)),
    'avgpool2d_1': ([(2, 3, 4, 5)], lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, 1)),
    'avgpool2d_1x1': ([(2, 3, 4, 5)], lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, (1, 1))),
    'avgpool2d_1_unbatched': ([(3, 4, 5)], lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, 1)),
    'avgpool2d_2': ([(2, 3, 4, 4)], lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, 2)),
    'avgpool2d_none_1': ([(2, 3, 4, 4)], lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, (None, 1))),
    'avgpool1d_1': ([(2, 3, 5)], lambda lib, x: lib.nn.functional.adaptive_avg_pool1d(x, 1)),
    'avgpool3d_1': ([(2, 3, 2, 4, 5)], lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(x, 1)),
    'avgpool3d_1_unbatched': ([(3, 2, 4, 5)], lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(x, 1)),
}


def _run(lib, name):
    shapes, fn = CASES[name]
    xs = _inputs(lib, shapes, seed=len(name))
    out = fn(lib, *xs)
    return xs, out


@pytest.mark.parametrize('name', sorted(CASES))
def test_graph_matches_torch(name):
    (txs, tout), (exs, eout) = _run(torch, name), _run(ember, name)
    assert walk(eout.grad_fn) == walk(tout.grad_fn)
    assert names(eout.grad_fn) == names(tout.grad_fn)
    assert len(names(tout.grad_fn)) >= 2
    np.testing.assert_allclose(eout.detach().numpy(), tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    g = np.random.default_rng(1).standard_normal(tuple(tout.shape))
    tgrads = torch.autograd.grad(tout, txs, torch.tensor(g))
    egrads = ember.autograd.grad(eout, exs, ember.tensor(g))
    assert len(egrads) == len(tgrads) == len(txs)
    for e, t in zip(egrads, tgrads):
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize('lib', [torch, ember], ids=['torch', 'ember'])
def test_module_graphs(lib):
    """nn.GroupNorm, nn.PReLU and nn.AdaptiveAvgPool2d record the same top nodes as their functionals."""
    lib.manual_seed(0)
    x = lib.randn(2, 4, 3, 3, requires_grad=True)
    assert lib.nn.GroupNorm(2, 4)(x).grad_fn.name() == 'NativeGroupNormBackward0'
    assert walk(lib.nn.PReLU(4)(x).grad_fn)[1][1][0] == 'ViewBackward0'
    assert lib.nn.AdaptiveAvgPool2d((1, 1))(x).grad_fn.name() == 'MeanBackward1'


def test_saved_attributes_match_torch():
    (_, t), (_, e) = _run(torch, 'group_norm_affine'), _run(ember, 'group_norm_affine')
    for attr in ('_saved_N', '_saved_C', '_saved_HxW', '_saved_group', '_saved_eps'):
        assert getattr(e.grad_fn, attr) == getattr(t.grad_fn, attr), attr
    for attr in ('_saved_input', '_saved_weight', '_saved_result1', '_saved_result2'):
        assert tuple(getattr(e.grad_fn, attr).shape) == tuple(getattr(t.grad_fn, attr).shape), attr
    (_, t), (_, e) = _run(torch, 'prelu_channels'), _run(ember, 'prelu_channels')
    for attr in ('_saved_self', '_saved_weight'):
        assert tuple(getattr(e.grad_fn, attr).shape) == tuple(getattr(t.grad_fn, attr).shape), attr
    (_, t), (_, e) = _run(torch, 'avgpool2d_1'), _run(ember, 'avgpool2d_1')
    # (torch 2.13 shows the negative dims it saved as unsigned 64-bit integers: 2**64 - 1, 2**64 - 2)
    assert tuple(e.grad_fn._saved_dim) == (-1, -2) and tuple(d - 2 ** 64 for d in t.grad_fn._saved_dim) == (-1, -2)
    assert e.grad_fn._saved_keepdim is t.grad_fn._saved_keepdim is True


@pytest.mark.parametrize('create_graph', [False, True])
def test_group_norm_statistics_are_differentiable(create_graph):
    """torch's native_group_norm returns mean and rstd as differentiable outputs: a loss that reads them gets
    their share of the input's gradient, in the first-order (fused kernel) and the recorded backward alike."""
    res = {}
    for lib in (torch, ember):
        x, w, b = _inputs(lib, [(2, 6, 5), (6,), (6,)], seed=3)
        out, mean, rstd = lib.native_group_norm(x, w, b, 2, 6, 5, 3, 1e-5)
        assert mean.requires_grad and rstd.requires_grad
        loss = (out * out).sum() + (mean * mean).sum() * 3 + rstd.sum()
        grads = lib.autograd.grad(loss, (x, w, b), create_graph=create_graph)
        second = lib.autograd.grad(sum((g * g).sum() for g in grads), (x, w)) if create_graph else ()
        res[lib] = [g.detach().numpy() for g in grads + tuple(second)]
    assert len(res[ember]) == len(res[torch]) == (5 if create_graph else 3)
    for e, t in zip(res[ember], res[torch]):
        np.testing.assert_allclose(e, t, rtol=1e-8, atol=1e-10)


def test_functional_errors_match_torch():
    for lib in (torch, ember):
        F = lib.nn.functional
        with pytest.raises(ValueError, match='Expected more than 1 value per channel when training'):
            F.group_norm(lib.randn(1, 2, 1), 2)
        with pytest.raises(RuntimeError, match='Expected number of channels in input to be divisible by num_groups'):
            F.group_norm(lib.randn(2, 4, 3), 3)
        with pytest.raises(RuntimeError, match=r'Found parameter numbers = 3 and channel size = 1\.'):
            F.prelu(lib.randn(3), lib.randn(3))
        with pytest.raises(RuntimeError, match='prelu: Type promoting not supported. Got Float and Double'):
            F.prelu(lib.randn(2, 3), lib.randn(3, dtype=lib.float64))
        with pytest.raises(RuntimeError, match='adaptive_avg_pool2d: output_size must be 2'):
            lib.ops.aten.adaptive_avg_pool2d(lib.randn(2, 3, 4), [1, 1, 1])


def test_split_nodes_save_torchs_arguments():
    """torch-pruning reads a split's dim and sizes from its node (``_saved_dim``, ``_saved_split_sizes``) to map
    channel indices through it; torch shows a negative dim as an unsigned 64-bit integer."""
    res = {}
    for lib in (torch, ember):
        x = lib.randn(2, 12, 4, 4, requires_grad=True) * 1
        nodes = [torch_split(x)[0].grad_fn for torch_split in (
            lambda x: x.split([6, 6], 1), lambda x: x.split(5, -3), lambda x: x.chunk(5, 1), lambda x: x.unbind(2))]
        res[lib] = [(g.name(), {n: getattr(g, n) % 2 ** 64 if n == '_saved_dim' else tuple(getattr(g, n))
                                if n != '_saved_split_size' else getattr(g, n)
                                for n in ('_saved_dim', '_saved_self_sym_sizes', '_saved_split_sizes',
                                          '_saved_split_size') if hasattr(g, n)}) for g in nodes]
    assert res[ember] == res[torch]
    assert res[ember][0] == ('SplitWithSizesBackward0', {'_saved_dim': 1, '_saved_self_sym_sizes': (2, 12, 4, 4),
                                                         '_saved_split_sizes': (6, 6)})



def test_pruning_graph_of_a_split_group_norm_block():
    """The graph torch-pruning walks for conv -> GroupNorm -> split -> cat -> mean (its DependencyGraph mapped 24
    channels onto the 12 of the conv under ember before)."""
    res = {}
    for lib in (torch, ember):
        lib.manual_seed(0)
        conv, gn = lib.nn.Conv2d(3, 12, 1), lib.nn.GroupNorm(4, 12)
        h1, h2 = lib.split(gn(conv(lib.randn(2, 3, 8, 8))), [6, 6], 1)
        res[lib] = names(lib.cat([h1, h2], 1).mean((2, 3)).grad_fn)
    assert res[ember] == res[torch]
    assert res[ember][:4] == ['MeanBackward1', 'CatBackward0', 'SplitWithSizesBackward0', 'NativeGroupNormBackward0']
