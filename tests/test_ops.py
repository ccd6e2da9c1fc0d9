"""Generic operator tests generated from the registry's OpInfo records: values, dtypes, shapes and view
strides against torch; meta shapes against CPU; gradients and second-order gradients against torch."""
import numpy as np
import pytest
import torch

import ember
from opinfo import OPS
from _harness import materialize, to_lib, call, flat, assert_same, as_np


def _cases(filter_fn=lambda info: True, dtypes=None):
    for name, info in sorted(OPS.items()):
        if not filter_fn(info):
            continue
        for dt in (dtypes(info) if dtypes else info.dtypes):
            yield pytest.param(info, dt, id=f'{name}-{dt}')


@pytest.mark.parametrize('info,dtype', list(_cases()))
def test_values_match_torch(info, dtype):
    for i, s in enumerate(info.samples(dtype)):
        args, kwargs = materialize(s, dtype, seed=i)
        try:
            t_out = call(info, torch, to_lib(args, torch), to_lib(kwargs, torch))
        except Exception as te:   # torch rejects it: ember must raise the same class
            with pytest.raises(type(te) if type(te) in (RuntimeError, TypeError, ValueError, IndexError)
                               else Exception):
                call(info, ember, to_lib(args, ember), to_lib(kwargs, ember))
            continue
        e_out = call(info, ember, to_lib(args, ember), to_lib(kwargs, ember))
        eo, to = flat(e_out), flat(t_out)
        assert len(eo) == len(to), f'{s}: {len(eo)} outputs vs {len(to)}'
        for e, t in zip(eo, to):
            assert_same(e, t, info, f'{info.name}({s}) [{dtype}]')


@pytest.mark.parametrize('info,dtype', list(_cases(lambda i: i.meta)))
def test_meta_matches_cpu(info, dtype):
    for i, s in enumerate(info.samples(dtype)):
        args, kwargs = materialize(s, dtype, seed=i)
        try:
            c_out = flat(call(info, ember, to_lib(args, ember), to_lib(kwargs, ember)))
        except Exception as ce:
            with pytest.raises(type(ce)):
                call(info, ember, to_lib(args, ember, device='meta'), to_lib(kwargs, ember, device='meta'))
            continue
        mkw = to_lib(kwargs, ember, device='meta')
        if not any(isinstance(x, np.ndarray) for x in flat(args) + flat(list(kwargs.values()))):
            mkw['device'] = 'meta'      # a factory: the device argument picks the Meta backend
        m_out = flat(call(info, ember, to_lib(args, ember, device='meta'), mkw))
        assert len(m_out) == len(c_out), f'{s}: {len(m_out)} meta outputs vs {len(c_out)} on CPU'
        for c, m in zip(c_out, m_out):
            if isinstance(c, ember.Tensor):
                assert m.device.type == 'meta'
                assert tuple(m.shape) == tuple(c.shape) and m.dtype is c.dtype, f'{s}: {m.shape} vs {c.shape}'
                if info.view:
                    assert m.stride() == c.stride()


def _grad_cases():
    return list(_cases(lambda i: i.grad, lambda i: i.grad_dtypes))


def _real_loss(total):
    """A real scalar loss from a possibly complex one, using both of its parts (NOTE [complex gradients])."""
    return total.real + total.imag if total.is_complex() else total


def _grads(info, lib, args, kwargs, seed, create_graph=False):
    targs = to_lib(args, lib, requires_grad=True)
    tkw = to_lib(kwargs, lib, requires_grad=True)
    leaves = [x for x in flat(targs) + flat(list(tkw.values())) if isinstance(x, (torch.Tensor, ember.Tensor))
              and x.requires_grad]
    out = [o for o in flat(call(info, lib, targs, tkw))
           if isinstance(o, (torch.Tensor, ember.Tensor)) and o.requires_grad]
    if not out or not leaves:
        return None, None, None
    rng = np.random.default_rng(seed + 100)
    weights = [lib.from_numpy(rng.uniform(-1, 1, tuple(o.shape))) for o in out]
    total = _real_loss(sum((o * w).sum() for o, w in zip(out, weights)))
    grads = lib.autograd.grad(total, leaves, allow_unused=True, create_graph=create_graph)
    return leaves, grads, total


@pytest.mark.parametrize('info,dtype', _grad_cases())
def test_grad_matches_torch(info, dtype):
    for i, s in enumerate(info.samples(dtype)):
        args, kwargs = materialize(s, dtype, seed=i)
        try:
            _, tg, _ = _grads(info, torch, args, kwargs, i)
        except (RuntimeError, IndexError, ValueError, TypeError):   # error samples: test_values checks them
            continue
        _, eg, _ = _grads(info, ember, args, kwargs, i)
        if tg is None:
            continue
        for k, (e, t) in enumerate(zip(eg, tg)):
            if t is None:
                assert e is None or np.allclose(as_np(e), 0), f'{s}: grad {k} should be None'
                continue
            assert e is not None, f'{info.name}({s}): missing grad for input {k}'
            np.testing.assert_allclose(as_np(e), as_np(t), atol=1e-6, rtol=1e-6, err_msg=f'{info.name}({s}) grad {k}')


@pytest.mark.parametrize('info,dtype', list(_cases(lambda i: i.grad and i.gradgrad, lambda i: i.grad_dtypes)))
def test_gradgrad_matches_torch(info, dtype):
    for i, s in enumerate(info.samples(dtype)):
        args, kwargs = materialize(s, dtype, seed=i)
        res = {}
        for lib in (torch, ember):
            try:
                leaves, g, _ = _grads(info, lib, args, kwargs, i, create_graph=True)
            except (RuntimeError, IndexError, ValueError, TypeError):
                if lib is torch:
                    break
                raise
            if g is None:
                break
            # one random weight per defined first-order gradient (the same in both libraries); a gradient that
            # does not require grad is a constant and adds nothing to the second order
            rng = np.random.default_rng(i + 7)
            terms = [(y * lib.from_numpy(rng.uniform(-1, 1, tuple(y.shape)))).sum() for y in g if y is not None]
            live = [t for t, y in zip(terms, [y for y in g if y is not None]) if y.requires_grad]
            res[lib] = lib.autograd.grad(_real_loss(sum(live)), leaves, allow_unused=True) if live else [None] * len(leaves)
        if torch not in res or ember not in res:
            continue
        assert len(res[ember]) == len(res[torch])
        for k, (e, t) in enumerate(zip(res[ember], res[torch])):
            if t is None or e is None:       # no second-order gradient on one side: the other's must be zero
                other = e if t is None else t
                assert other is None or not np.any(as_np(other)), \
                    f'{info.name}({s}): 2nd-order grad {k} is {"missing" if e is None else "extra"} in ember'
                continue
            np.testing.assert_allclose(as_np(e), as_np(t), atol=1e-6, rtol=1e-6,
                                       err_msg=f'{info.name}({s}) gradgrad {k}')
