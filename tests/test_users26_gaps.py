"""Gaps found by running libraries' test suites in the session of 2026-11-28 (fourth): each test compares ember
with torch in the same process."""
import warnings

import numpy as np
import pytest
import torch

import ember


def _outcome(f):
    """(values or None, error class or None, the first words of the message)."""
    try:
        r = f()
        return (r.dtype.__str__().split('.')[-1], r.tolist()), None, ''
    except Exception as e:      # noqa: BLE001 (the class is compared)
        return None, type(e).__name__, str(e)[:60]


def test_numpy_complex64_scalar_is_read_as_a_float():
    """torchio's RandomSpike: a complex tensor op an ``np.complex64`` (not a Python complex, as complex128 is):
    torch's parser reads it with float(), dropping the imaginary part with NumPy's ComplexWarning."""
    s = np.complex64(3 + 1j)
    for case in [lambda L: L.zeros(2, dtype=L.complex64) + s, lambda L: L.ones(2) * s,
                 lambda L: L.full((2,), s), lambda L: L.zeros(2, dtype=L.complex64).fill_(s),
                 lambda L: L.ones(2).add(1, alpha=s), lambda L: L.ones(2) < s,
                 lambda L: L.zeros(2, dtype=L.complex64) - np.complex128(1j), lambda L: L.tensor(s)]:
        with warnings.catch_warnings(record=True) as we:
            warnings.simplefilter('always')
            e = _outcome(lambda: case(ember))
        with warnings.catch_warnings(record=True) as wt:
            warnings.simplefilter('always')
            t = _outcome(lambda: case(torch))
        assert e == t
        assert [w.category for w in we] == [w.category for w in wt]
        assert all(w.filename == __file__ for w in we)


def test_complex_saves_its_inputs_as_torch():
    """torch's code generator saves ``real`` and ``imag`` for complex()'s formulas: writing one in place before
    backward raises the version error."""
    for lib in (torch, ember):
        w = lib.randn(3, requires_grad=True)
        re = w * 1
        c = lib.complex(re, w * 2)
        re.add_(1)
        with pytest.raises(RuntimeError, match=r"\[(torch|ember).FloatTensor \[3\]\], which is output 0 of Add, is at "
                                               r"version 1; expected version 0"):
            c.abs().sum().backward()


def test_version_error_names_the_node_as_torch():
    """torch 2.13's message: "output 0 of Mul" (no "Backward0"), and no such clause for a leaf."""
    msgs = []
    for lib in (torch, ember):
        w = lib.randn(3, requires_grad=True)
        out = []
        for k in range(3):
            a = w * 1
            b = a.sin() if k == 0 else a.exp()
            if k == 2:
                with lib.no_grad():
                    w.mul_(1)
                b = w.cos()
                with lib.no_grad():
                    w.mul_(1)
            (b.add_(1) if k == 1 else a.mul_(2))
            try:
                b.sum().backward()
                out.append('ok')
            except RuntimeError as e:
                out.append(str(e).split(' Hint')[0].replace('ember.', 'torch.'))
        msgs.append(out)
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize('case', ['x[1:] += x[:-1]', 'x2[1:] += x2[:-1]', 'torch.add(x[1:], 1, out=x[:-1])',
                                  'x[1:].mul_(x[:-1])', 'x2.copy_(x2.t())', 'x[:5] = x[5:]', 'x[::2] = x[1::2]',
                                  'x[2:8].copy_(x[2:8])', 'x[1:].add_(x[1:])', 'x.add_(x)',
                                  'x2[1:, 1:] += x2[:-1, :-1]'])
def test_partial_memory_overlap_is_refused_as_torch(case):
    """NOTE [memory overlap]: an input that shares part of the written tensor's memory (both dense) raises
    torch's error; the same memory, disjoint memory, or tensors with gaps do not (x2[1:, 1:]: torch writes in its
    loop order there, ember computes first, so only the outcome's kind is compared for that case)."""
    res = []
    for lib in (torch, ember):
        x, x2 = lib.arange(10.), lib.arange(16.).reshape(4, 4)
        try:
            exec(case, {'torch': lib, 'x': x, 'x2': x2})
            res.append((x.tolist(), x2.tolist()) if '1:, 1:' not in case else 'ran')
        except RuntimeError as e:
            res.append(str(e))
            assert (x.tolist(), x2.tolist()) == (list(range(10)), [list(range(i, i + 4)) for i in range(0, 16, 4)])
    assert res[0] == res[1]


def test_compiled_eager_backend_replays_the_functions_grad_mode():
    """timm's compiled optimizer steps (``torch.compile(opt.step, backend='eager')``): the step runs under
    ``@no_grad``; the captured graph turns grad mode off and on where the function did (NOTE [grad mode in
    captured graphs]), so the second call, which replays the graph, does not write a leaf with grad mode on."""
    res = []
    for lib in (torch, ember):
        lib._dynamo.reset()
        q = lib.nn.Parameter(lib.ones(4))
        opt = lib.optim.SGD([q], lr=0.1, momentum=0.9)
        step = lib.compile(opt.step, backend='eager')
        out = []
        for _ in range(3):
            q.grad = lib.ones_like(q)
            step()
            out.append((q.detach().tolist(), lib.is_grad_enabled()))
        gms = []

        def backend(gm, example_inputs):
            gms.append(gm)
            return gm

        p = lib.nn.Parameter(lib.ones(3))

        def f(x):
            y = x * 2
            with lib.no_grad():
                p.add_(1)
            return y.sin()
        r = lib.compile(f, backend=backend)(lib.ones(3, requires_grad=True))
        calls = [n.args for n in gms[0].graph.nodes if getattr(n.target, '__name__', '') == '_set_grad_enabled']
        res.append((out, r.requires_grad, p.tolist(), calls))
    assert res[0] == res[1]


def test_fx_tracer_subclass_without_proxy_factory_keyword():
    """torchvision's NodePathTracer (timm's FX feature extraction) overrides create_proxy without
    ``proxy_factory_fn``: torch passes that keyword only where the signature has it."""
    res = []
    for lib in (torch, ember):
        class MyTracer(lib.fx.Tracer):
            def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, *_):
                return super().create_proxy(kind, target, args, kwargs, name, type_expr)

        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.ones(3))

            def forward(self, x):
                return x * self.w
        res.append([n.op for n in MyTracer().trace(M()).nodes])
    assert res[0] == res[1]


def test_swalr_state_dict_leaves_out_its_function():
    """lightning's SWA checkpoints: SWALR's state keeps the strategy's name, not the annealing function."""
    res = []
    for lib in (torch, ember):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(2))], lr=0.1)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=3, anneal_strategy='linear')
        sched.step()
        sd = sched.state_dict()
        other = lib.optim.swa_utils.SWALR(lib.optim.SGD([lib.nn.Parameter(lib.zeros(2))], lr=0.1), swa_lr=0.05)
        other.load_state_dict(sd)
        res.append((sorted(sd), other.anneal_func(0.5), sd['_anneal_strategy']))
    assert res[0] == res[1]


def test_dtype_and_device_pickle_as_torchs():
    """A dtype pickles as a global (torch's ``__reduce__`` returns its name, which YAML refuses: lightning skips
    such hyperparameters with a warning); a device without an index pickles with one argument."""
    import pickle
    import yaml
    for lib in (torch, ember):
        for d in (lib.float32, lib.bool, lib.bfloat16, lib.int64):
            assert pickle.loads(pickle.dumps(d)) is d
        with pytest.raises(ValueError):
            yaml.dump(lib.float32)
    assert ember.float32.__reduce__() == torch.float32.__reduce__() == 'float32'
    assert ember.device('cpu').__reduce__()[1] == torch.device('cpu').__reduce__()[1] == ('cpu',)
    assert ember.device('cpu', 0).__reduce__()[1] == torch.device('cpu', 0).__reduce__()[1]
    assert yaml.dump(ember.device('cpu')).replace('ember', 'torch') == yaml.dump(torch.device('cpu'))


@pytest.mark.parametrize('s1,s2,mode', [((2, 30, 5), (30, 5), 'use_mm_for_euclid_dist_if_necessary'),
                                        ((3, 4), (5, 4), 'use_mm_for_euclid_dist'),
                                        ((40, 3), (2, 1, 7, 3), 'use_mm_for_euclid_dist_if_necessary'),
                                        ((26, 3), (3, 3), 'donot_use_mm_for_euclid_dist'),
                                        ((4, 3), (5, 3), 'use_mm_for_euclid_dist_if_necessary')])
def test_cdist_takes_torchs_matrix_product_path(s1, s2, mode):
    """vector-quantize-pytorch's codebook distances: torch's cdist(p=2) with more than 25 rows is one matrix
    product (O(P R) memory; ember built the (P, R, M) differences); values, gradients and nodes as torch's."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(s1).astype('float32'), rng.standard_normal(s2).astype('float32')
    out = []
    for lib in (torch, ember):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        d = lib.cdist(x, y, compute_mode=mode)
        (d * d.detach().cos()).sum().backward()
        out.append((d.detach().numpy(), x.grad.numpy(), y.grad.numpy(), d.grad_fn.name(),
                    [type(f).__name__ for f, _ in d.grad_fn.next_functions if f is not None]))
    for u, v in zip(out[0][:3], out[1][:3]):
        np.testing.assert_allclose(v, u, rtol=1e-5, atol=1e-5)
    assert out[0][3:] == out[1][3:]
    for lib in (torch, ember):
        with pytest.raises(ValueError, match='bad is not a valid value for compute_mode'):
            lib.cdist(lib.ones(2, 2), lib.ones(2, 2), compute_mode='bad')


def test_deprecation_warnings_of_assert_allclose_and_script_method():
    """torchcde's and x-transformers' suites: torch 2.13 warns for these two deprecated names."""
    for lib in (torch, ember):
        with pytest.warns(FutureWarning, match=r'`torch.testing.assert_allclose\(\)` is deprecated since 1.12'):
            lib.testing.assert_allclose(lib.ones(2), lib.ones(2))
        with pytest.warns(DeprecationWarning, match='`torch.jit.script_method` is deprecated'):
            lib.jit.script_method(_identity)


def _identity(x):
    return x


@pytest.mark.parametrize('w', [0.1, 0.7, -0.3, 1.0])
def test_large_lerp_and_addcmul_in_place_keep_torchs_bits(w):
    """lerp_/addcmul_ of float32 tensors above the block size write into their tensor block by block (one
    float64 multiply-add per element, torch's fused rounding), also where the output is another operand."""
    rng = np.random.default_rng(3)
    n = (1 << 18) * 4 + 3
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    res = []
    for lib in (torch, ember):
        x, y = lib.tensor(a), lib.tensor(b)
        x.lerp_(y, w)
        z = lib.tensor(b)
        lib.lerp(lib.tensor(a), z, w, out=z)            # the output is the end operand
        u = lib.tensor(a)
        u.addcmul_(lib.tensor(b), u, value=w)           # the tensor written is also a factor
        res.append([t.numpy().view(np.uint32) for t in (x, z, u)])
    for e, t in zip(res[1], res[0]):
        np.testing.assert_array_equal(e, t)
