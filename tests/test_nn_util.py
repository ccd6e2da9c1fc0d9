"""Helpers for the nn tests: build a torch module and the same ember module, copy torch's weights into
ember through NumPy, run both on the same inputs and compare outputs, input gradients, parameter
gradients and buffers. (Also a few tests of the helpers' own assumptions.)"""
import numpy as np
import pytest
import torch

import ember


def e2n(t):
    return np.asarray(t.detach()._a) if isinstance(t, ember.Tensor) else t.detach().numpy()


def t2e(t):
    return ember.from_numpy(t.detach().numpy().copy())


def copy_state(tmod, emod):
    """Load torch's state_dict into ember's module (same keys, same shapes required)."""
    sd = {k: t2e(v) for k, v in tmod.state_dict().items()}
    res = emod.load_state_dict(sd)
    assert not res.missing_keys and not res.unexpected_keys
    return emod


def _flat(x):
    if isinstance(x, (tuple, list)):
        out = []
        for y in x:
            out.extend(_flat(y))
        return out
    if hasattr(x, 'data') and hasattr(x, 'batch_sizes'):      # PackedSequence
        return _flat(x.data)
    return [x]


def _mk(lib, a, grad):
    if isinstance(a, np.ndarray):
        t = lib.from_numpy(a.copy())
        if grad and a.dtype.kind == 'f':
            t.requires_grad_(True)
        return t
    if isinstance(a, (tuple, list)):
        return type(a)(_mk(lib, x, grad) for x in a)
    return a


def assert_close(e, t, atol=1e-5, rtol=1e-4, what=''):
    assert isinstance(e, ember.Tensor), f'{what}: got {type(e)}'
    assert tuple(e.shape) == tuple(t.shape), f'{what}: shape {tuple(e.shape)} vs {tuple(t.shape)}'
    assert e.dtype.name == str(t.dtype).replace('torch.', ''), f'{what}: dtype {e.dtype} vs {t.dtype}'
    np.testing.assert_allclose(e2n(e), e2n(t), atol=atol, rtol=rtol, err_msg=what)


def compare_module(tmod, emod, inputs, train=True, atol=1e-5, rtol=1e-4, seed=0, kwargs=None, grad=True,
                   copy=True, call=None):
    """Run both modules on ``inputs`` (NumPy arrays, or nested tuples of them) and compare everything."""
    kwargs = kwargs or {}
    if copy:
        copy_state(tmod, emod)
    tmod.train(train)
    emod.train(train)
    t_in = [_mk(torch, a, grad) for a in inputs]
    e_in = [_mk(ember, a, grad) for a in inputs]
    t_out = (call or (lambda m, *a, **k: m(*a, **k)))(tmod, *t_in, **kwargs)
    e_out = (call or (lambda m, *a, **k: m(*a, **k)))(emod, *e_in, **kwargs)
    to, eo = _flat(t_out), _flat(e_out)
    assert len(to) == len(eo)
    for i, (e, t) in enumerate(zip(eo, to)):
        if isinstance(t, torch.Tensor):
            assert_close(e, t, atol, rtol, f'output {i}')
    for (n, tb), (n2, eb) in zip(tmod.named_buffers(), emod.named_buffers()):
        assert n == n2
        assert_close(eb, tb, atol, rtol, f'buffer {n}')
    if not grad:
        return e_out, t_out
    rng = np.random.default_rng(seed)
    pairs = [(e, t) for e, t in zip(eo, to) if isinstance(t, torch.Tensor) and t.requires_grad]
    ws = [rng.uniform(-1, 1, tuple(t.shape)).astype(e2n(t).dtype) for _, t in pairs]
    sum((t * torch.from_numpy(w)).sum() for (_, t), w in zip(pairs, ws)).backward()
    sum((e * ember.from_numpy(w)).sum() for (e, _), w in zip(pairs, ws)).backward()
    for i, (e, t) in enumerate(zip(_flat(e_in), _flat(t_in))):
        if isinstance(t, torch.Tensor) and t.grad is not None:
            assert e.grad is not None, f'input {i} has no grad'
            assert_close(e.grad, t.grad, atol, rtol, f'grad of input {i}')
    for (n, tp), (n2, ep) in zip(tmod.named_parameters(), emod.named_parameters()):
        assert n == n2
        if tp.grad is None:
            assert ep.grad is None or np.allclose(e2n(ep.grad), 0), f'{n} should have no grad'
        else:
            assert ep.grad is not None, f'parameter {n} has no grad'
            assert_close(ep.grad, tp.grad, atol, rtol, f'grad of {n}')
    return e_out, t_out


def same_state_dict_layout(tmod, emod):
    tk = [(k, tuple(v.shape)) for k, v in tmod.state_dict().items()]
    ek = [(k, tuple(v.shape)) for k, v in emod.state_dict().items()]
    assert ek == tk


def randn(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_copy_state_round_trip():
    t = torch.nn.Linear(3, 2)
    e = ember.nn.Linear(3, 2)
    copy_state(t, e)
    np.testing.assert_array_equal(e2n(e.weight), e2n(t.weight))


def test_compare_module_detects_a_difference():
    t = torch.nn.Linear(3, 2)
    e = ember.nn.Linear(3, 2)
    with pytest.raises(AssertionError):
        compare_module(t, e, [randn(4, 3)], copy=False)
