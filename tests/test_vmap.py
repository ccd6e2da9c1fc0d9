"""ember.func.vmap against a Python loop and against torch.func.vmap: every class of batching rule, in_dims and
out_dims, chunk_size, randomness, the slow fallback's warning, and vmap(grad) per-sample gradients."""
import warnings

import numpy as np
import pytest
import torch
import torch.func as tf

import ember
import ember.func as ef

RNG = np.random.default_rng(0)


def _e(a):
    return ember.tensor(np.asarray(a))


def _t(a):
    return torch.tensor(np.asarray(a))


def close(e, t, tol=1e-6):
    if isinstance(t, (tuple, list)):
        assert isinstance(e, (tuple, list)) and len(e) == len(t) > 0
        for a, b in zip(e, t):
            close(a, b, tol)
        return
    if isinstance(t, dict):
        assert list(e) == list(t)
        for k in t:
            close(e[k], t[k], tol)
        return
    assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


A = RNG.standard_normal((4, 3, 5))
B = RNG.standard_normal((4, 5))
W = RNG.standard_normal((5, 2))
C = RNG.standard_normal((3, 5))

# (name, fn(lib, a, b), in_dims): one per class of rule (pointwise, dims, shapes, matmul, linear, conv, fallback)
FNS = [
    ('pointwise_broadcast', lambda L, a, b: (a * b).exp() - b.sin() + 1.5, (0, 0)),
    ('pointwise_unbatched', lambda L, a, b: a * b + b, (0, None)),
    ('sum_mean_dims', lambda L, a, b: a.sum(0) + a.mean(-1, keepdim=True) + a.sum(), (0, None)),
    ('softmax_logsumexp', lambda L, a, b: a.softmax(-1) * a.logsumexp(1, keepdim=True), (0, None)),
    ('amax_var_std', lambda L, a, b: a.amax(0) + a.var(1, keepdim=True).sum() + a.std(), (0, None)),
    ('max_dim', lambda L, a, b: a.max(1).values + a.argmax(1), (0, None)),
    ('cat_stack', lambda L, a, b: L.cat([a, b.unsqueeze(0)], 0).sum(0) + L.stack([b, b], 1).sum(1), (0, 0)),
    ('views', lambda L, a, b: a.transpose(0, 1).reshape(-1)[:7] + a.view(15)[3:10] + a.permute(1, 0).reshape(-1)[2:9], (0, None)),
    ('expand_unsqueeze', lambda L, a, b: b.unsqueeze(0).expand(3, 5) * a + a[:, None, 2].squeeze(1).unsqueeze(-1),
     (0, 0)),
    ('select_flip_diag', lambda L, a, b: a.select(1, 2) + a.flip(0)[0, :3].sum() + a[:, :3].diagonal().sum(), (0, None)),
    ('matmul_family', lambda L, a, b: (a @ b + L.mm(a, b.unsqueeze(1)).squeeze(1) + a.mv(b)).sum() + b.dot(b), (0, 0)),
    ('matmul_unbatched_left', lambda L, a, b: L.tensor(np.ones((2, 3))) @ a + (b @ L.tensor(np.ones((5, 4)))).sum(),
     (0, 0)),
    ('gather_index_select', lambda L, a, b: a.gather(1, L.tensor([[0, 1], [2, 3], [4, 0]])).sum() +
     a.index_select(1, L.tensor([4, 1])).sum(), (0, None)),
    ('cumsum_cumprod', lambda L, a, b: a.cumsum(1) + a.cumprod(0), (0, None)),
    ('where_clamp', lambda L, a, b: L.where(a > 0, a, b).clamp(-0.5, 0.5), (0, 0)),
    ('index', lambda L, a, b: a[L.tensor([2, 0])].sum(0) + a[:, L.tensor([4, 4, 1])].sum(1).sum() + a[1], (0, None)),
    ('inplace_pointwise', lambda L, a, b: _inplace(a, b), (0, 0)),
]


def _inplace(a, b):
    z = a.clone()
    z.mul_(b)
    z.add_(1.5).sub_(b)
    return z


@pytest.mark.parametrize('name,fn,in_dims', FNS, ids=[f[0] for f in FNS])
def test_vmap_matches_loop_and_torch(name, fn, in_dims):
    a, b = A, (B if in_dims[1] == 0 else C[0])
    args_e, args_t = (_e(a), _e(b)), (_t(a), _t(b))
    with warnings.catch_warnings():
        warnings.simplefilter('error')      # none of these may take the slow path
        got = ef.vmap(lambda x, y: fn(ember, x, y), in_dims=in_dims)(*args_e)
    loop = ember.stack([fn(ember, args_e[0][i], args_e[1][i] if in_dims[1] == 0 else args_e[1])
                        for i in range(a.shape[0])])
    close(got, loop.double() if got.dtype == ember.float64 else loop)
    close(got, tf.vmap(lambda x, y: fn(torch, x, y), in_dims=in_dims)(*args_t))


def test_linear_conv_and_losses_match_torch():
    x, w, bias = RNG.standard_normal((6, 4)), RNG.standard_normal((3, 4)), RNG.standard_normal(3)
    f = lambda F_: lambda xi, w_, b_: F_.linear(xi, w_, b_).relu()
    close(ef.vmap(f(ember.nn.functional), in_dims=(0, None, None))(_e(x), _e(w), _e(bias)),
          tf.vmap(f(torch.nn.functional), in_dims=(0, None, None))(_t(x), _t(w), _t(bias)))
    ws = RNG.standard_normal((6, 3, 4))     # per-sample weights (ensembles): linear decomposes into matmul
    close(ef.vmap(f(ember.nn.functional), in_dims=(0, 0, None))(_e(x), _e(ws), _e(bias)),
          tf.vmap(f(torch.nn.functional), in_dims=(0, 0, None))(_t(x), _t(ws), _t(bias)))
    imgs, k = RNG.standard_normal((5, 2, 3, 6, 6)), RNG.standard_normal((4, 3, 3, 3))
    g = lambda F_: lambda im: F_.max_pool2d(F_.conv2d(im, k_(F_), padding=1), 2)
    k_ = lambda F_: _e(k) if F_ is ember.nn.functional else _t(k)
    close(ef.vmap(g(ember.nn.functional))(_e(imgs)), tf.vmap(g(torch.nn.functional))(_t(imgs)))
    close(ef.vmap(g(ember.nn.functional))(_e(imgs[:, 0])), tf.vmap(g(torch.nn.functional))(_t(imgs[:, 0])))
    logits, target = RNG.standard_normal((8, 3, 5)), RNG.integers(0, 5, (8, 3))
    for red in ('mean', 'sum', 'none'):
        ce = lambda F_: lambda lg, tg: F_.cross_entropy(lg, tg, reduction=red)
        close(ef.vmap(ce(ember.nn.functional))(_e(logits), _e(target)),
              tf.vmap(ce(torch.nn.functional))(_t(logits), _t(target)))


def test_in_dims_out_dims_nested_and_chunks():
    d = {'a': RNG.standard_normal((3, 4)), 'b': RNG.standard_normal((4, 2))}
    f = lambda L: lambda inp, s: ({'x': inp['a'] * s, 'y': inp['b'].sum(0)}, inp['a'].sum())
    ein, tin = {'a': _e(d['a']), 'b': _e(d['b'])}, {'a': _t(d['a']), 'b': _t(d['b'])}
    for chunk in (None, 1, 2, 3):
        e = ef.vmap(f(ember), in_dims=({'a': 1, 'b': 0}, None), out_dims=({'x': 1, 'y': 0}, 0),
                    chunk_size=chunk)(ein, _e(2.0))
        t = tf.vmap(f(torch), in_dims=({'a': 1, 'b': 0}, None), out_dims=({'x': 1, 'y': 0}, 0),
                    chunk_size=chunk)(tin, _t(2.0))
        close(e, t)
    # an output that does not depend on the batch is broadcast; vmap of vmap
    close(ef.vmap(lambda x: _e(1.0) + 0 * 1)(_e(B)), tf.vmap(lambda x: _t(1.0) + 0 * 1)(_t(B)))
    close(ef.vmap(ef.vmap(lambda x, y: (x * y).sum()), in_dims=(0, None))(_e(A), _e(C)),
          tf.vmap(tf.vmap(lambda x, y: (x * y).sum()), in_dims=(0, None))(_t(A), _t(C)))


def test_embedding_and_inplace_on_unbatched():
    w, ids = RNG.standard_normal((10, 3)), RNG.integers(0, 10, (4, 7))
    close(ef.vmap(lambda i: ember.nn.functional.embedding(i, _e(w)))(_e(ids)),
          tf.vmap(lambda i: torch.nn.functional.embedding(i, _t(w)))(_t(ids)))
    with pytest.raises(RuntimeError, match='vmap: add_\\(self, \\*extra_args\\) is not possible'):
        ef.vmap(lambda y: ember.ones(5, dtype=ember.float64).add_(y))(_e(B))


def test_vmap_errors():
    with pytest.raises(ValueError, match='same size in the mapped dimension'):
        ef.vmap(lambda x, y: x + y)(_e(A), _e(C))
    with pytest.raises(ValueError, match='in_dim'):
        ef.vmap(lambda x: x, in_dims=3)(_e(B))
    with pytest.raises(ValueError, match='must only return Tensors'):
        ef.vmap(lambda x: 1.0)(_e(B))
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        ef.vmap(lambda x: x, randomness='x')
    with pytest.raises(ValueError, match='in_dims is not compatible'):
        ef.vmap(lambda x, y: x, in_dims=(0, 0, 0))(_e(B), _e(B))


def test_randomness_and_fallback_warning():
    x = ember.zeros(4, 1000)
    with pytest.raises(RuntimeError, match='randomness error mode'):
        ef.vmap(lambda v: ember.nn.functional.dropout(v + 1, 0.5))(x)
    same = ef.vmap(lambda v: ember.nn.functional.dropout(v + 1, 0.5), randomness='same')(x)
    assert (same == same[0]).all()
    diff = ef.vmap(lambda v: ember.nn.functional.dropout(v + 1, 0.5), randomness='different')(x)
    assert not (diff == diff[0]).all()
    # random factories inside the vmapped function (no tensor argument) follow randomness too
    with pytest.raises(RuntimeError, match='randomness error mode'):
        ef.vmap(lambda v: v + ember.randn(1000))(x)
    same = ef.vmap(lambda v: v + ember.randn(1000), randomness='same')(x)
    assert (same == same[0]).all()
    diff = ef.vmap(lambda v: v + ember.rand(1000), randomness='different')(x)
    assert not (diff == diff[0]).all() and diff.shape == (4, 1000)
    assert ef.vmap(lambda v: v + ember.zeros(1000))(x).shape == (4, 1000)     # other factories are unaffected
    ember.randn(3)      # and outside vmap nothing is left switched on
    with pytest.warns(UserWarning, match='performance drop because we have not yet implemented the batching rule '
                                         'for aten::'):
        got = ef.vmap(lambda v: ember.histc(v, bins=4))(_e(A))      # histc: no batching rule
    close(got, torch.stack([torch.histc(r, bins=4) for r in _t(A)]))


def test_per_sample_gradients_and_ensembles_match_torch():
    ember.manual_seed(0)
    torch.manual_seed(0)
    em = ember.nn.Sequential(ember.nn.Linear(6, 8), ember.nn.Tanh(), ember.nn.Linear(8, 3)).double()
    tm = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).double()
    with torch.no_grad():
        for (k, a), (_, b) in zip(em.state_dict().items(), tm.state_dict().items()):
            b.copy_(torch.from_numpy(a.numpy().copy()))
    x, y = RNG.standard_normal((10, 6)), RNG.integers(0, 3, 10)

    def loss(F_, L, m):
        return lambda p, xi, yi: L.nn.functional.cross_entropy(F_.functional_call(m, p, (xi.unsqueeze(0),)),
                                                                yi.unsqueeze(0))
    pe = {k: v.detach() for k, v in em.named_parameters()}
    pt = {k: v.detach() for k, v in tm.named_parameters()}
    e = ef.vmap(ef.grad(loss(ef, ember, em)), in_dims=(None, 0, 0))(pe, _e(x), _e(y))
    t = tf.vmap(tf.grad(loss(tf, torch, tm)), in_dims=(None, 0, 0))(pt, _t(x), _t(y))
    close(e, t)
    loop = [ef.grad(loss(ef, ember, em))(pe, _e(x)[i], _e(y)[i]) for i in range(10)]
    close(e, {k: ember.stack([g[k] for g in loop]) for k in pe})
    # model ensembling: stacked parameters, one vmap over the models
    models = [ember.nn.Linear(6, 3).double() for _ in range(4)]
    params, buffers = ef.stack_module_state(models)
    out = ef.vmap(lambda p, b, xx: ef.functional_call(models[0], (p, b), (xx,)), in_dims=(0, 0, None))(
        params, buffers, _e(x))
    close(out, torch.stack([torch.from_numpy(m(_e(x)).detach().numpy()) for m in models]))



def test_grad_of_vmap_matches_torch():
    """Differentiating through vmap from outside: the batching kernels' physical operations are recorded by autograd
    too (their arguments require grad), so grad(vmap(f)) and backward() of a vmapped result work."""
    f = lambda L, F_: lambda v, X: F_.vmap(lambda x: (v * x).sin().sum() * x[0])(X).pow(2).sum()
    close(ef.grad(f(ember, ef), argnums=(0, 1))(_e(B[0]), _e(B)), tf.grad(f(torch, tf), argnums=(0, 1))(_t(B[0]), _t(B)))
    w = _e(C).requires_grad_()
    ef.vmap(lambda x: (w @ x).tanh())(_e(B)).sum().backward()
    tw = _t(C).requires_grad_()
    tf.vmap(lambda x: (tw @ x).tanh())(_t(B)).sum().backward()
    close(w.grad, tw.grad)


def test_batch_norm_and_per_sample_weights_batch_without_the_fallback():
    """batch_norm in training with no running statistics (functorch's replace_all_batch_norm_modules_), in
    evaluation with shared ones, per-sample affine weights, and per-sample gradients through it: torch.func's
    values, and no per-sample fallback on the way."""
    x = RNG.standard_normal((5, 4, 3, 6))
    w, b = RNG.standard_normal(3), RNG.standard_normal(3)
    rm, rv = RNG.standard_normal(3), RNG.uniform(0.5, 1.5, 3)
    ws = RNG.standard_normal((5, 3))
    filters, tables, idx = RNG.standard_normal((5, 2, 3, 2)), RNG.standard_normal((5, 7, 2)), RNG.integers(0, 7, (5, 4))

    def cases(lib, F, T):
        bn = lib.nn.functional.batch_norm
        return [F.vmap(lambda xi: bn(xi, None, None, T(w), T(b), training=True))(T(x)),
                F.vmap(lambda xi: bn(xi, T(rm), T(rv), T(w), T(b), training=False))(T(x)),
                F.vmap(lambda xi, wi: bn(xi, None, None, wi, T(b), training=True))(T(x), T(ws)),
                F.vmap(F.grad(lambda wi, xi: (bn(xi, None, None, wi, T(b), training=True) ** 3).sum()),
                       in_dims=(None, 0))(T(w), T(x)),
                F.vmap(lambda xi, wi: lib.nn.functional.conv1d(xi, wi))(T(x), T(filters)),
                F.vmap(lambda wi, i: lib.nn.functional.embedding(i, wi))(T(tables), T(idx))]
    with warnings.catch_warnings():
        warnings.simplefilter('error')      # the fallback's performance warning fails the test
        got = cases(ember, ef, _e)
    close(got, cases(torch, tf, _t), 1e-9)


def test_indexing_with_per_sample_indices_matches_torch():
    """x[idx] with batched indices (per-sample rows, columns, pairs of indices, a shared table indexed per sample,
    indices after slices and an ellipsis): torch.func.vmap's values and shapes, without the fallback."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((5, 4, 6, 3))
    i, j = rng.integers(-4, 4, (5, 2, 3)), rng.integers(0, 6, (5, 3))
    cases = [(lambda a, b: a[b], (0, 0), (x, i)),
             (lambda a, b: a[:, b], (0, 0), (x, rng.integers(0, 6, (5, 2, 3)))),
             (lambda a, b, c: a[b, c], (0, 0, 0), (x, i[:, 0], j)),
             (lambda a, b, c: a[:, b, c], (0, 0, None), (x, rng.integers(0, 6, (5, 2, 1)), rng.integers(0, 3, (3,)))),
             (lambda a, b: a[b], (None, 0), (x[0], i)),
             (lambda a, b: a[..., b], (0, 0), (x, rng.integers(0, 3, (5, 4))))]
    for f, dims, args in cases:
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            got = ef.vmap(f, in_dims=dims)(*[_e(a) for a in args])
        close(got, tf.vmap(f, in_dims=dims)(*[_t(a) for a in args]), 0)


def test_ensemble_gradients_through_linear_match_torch():
    """vmap(grad) over stacked per-model weights (model ensembling): linear's fused backward with a batched weight
    batches (a stacked matmul for the input's gradient) and gives torch.func's gradients."""
    rng = np.random.default_rng(6)
    W, b, x = rng.standard_normal((4, 3, 5)), rng.standard_normal((4, 3)), rng.standard_normal((4, 7, 5))

    def run(lib, F, T):
        def loss(w, bb, xi):
            return (lib.nn.functional.linear(xi, w, bb).tanh() ** 2).sum()
        return F.vmap(F.grad(loss, argnums=(0, 1, 2)))(T(W), T(b), T(x))
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        got = run(ember, ef, _e)
    close(got, run(torch, tf, _t), 1e-9)
