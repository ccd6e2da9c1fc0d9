"""Every operator's OpInfo samples on the GPU against the same samples on the CPU: values, dtypes, shapes,
the device of every output, errors of the same class, and gradients."""
import warnings

import numpy as np
import pytest

import ember
from opinfo import OPS
from _harness import materialize, to_lib, call, flat

# CuPy's transcendental functions and reductions round differently from NumPy's: a few ulps
TOL = {'float32': dict(rtol=2e-5, atol=2e-5), 'float64': dict(rtol=1e-9, atol=1e-11)}


def _cases(filter_fn=lambda info: True, dtypes=None):
    for name, info in sorted(OPS.items()):
        if filter_fn(info):
            for dt in (dtypes(info) if dtypes else info.dtypes):
                yield pytest.param(info, dt, id=f'{name}-{dt}')


def _host(x):
    return x.detach().cpu().numpy() if isinstance(x, ember.Tensor) else x


def _run(info, args, kwargs, device):
    ember.manual_seed(0)            # random operators draw on the host: seeded, both devices draw the same values
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return call(info, ember, to_lib(args, ember, device=device), to_lib(kwargs, ember, device=device))


def _compare(c, g, info, dtype, what):
    if isinstance(c, ember.Tensor):
        assert isinstance(g, ember.Tensor), f'{what}: {type(g)}'
        assert g.device.type == 'cuda', f'{what}: output on {g.device}'
        assert g.dtype is c.dtype and tuple(g.shape) == tuple(c.shape), f'{what}: {g.dtype}{tuple(g.shape)} vs ' \
                                                                         f'{c.dtype}{tuple(c.shape)}'
        if info.view:
            assert g.stride() == c.stride() and g.storage_offset() == c.storage_offset(), f'{what}: strides'
        if 'empty' in info.name:        # uninitialised memory
            return
        tol = TOL.get(dtype, dict(rtol=0, atol=0))
        np.testing.assert_allclose(_host(g), _host(c), equal_nan=True, err_msg=what,
                                   rtol=max(tol['rtol'], info.rtol), atol=max(tol['atol'], info.atol))
    else:
        assert g == c or (isinstance(c, float) and np.isclose(g, c)), f'{what}: {g} vs {c}'


def _is_factory(info):
    from ember._dispatch import dispatcher
    name = info.name.split('.')[-1]
    return any(op.schema.name == name and any(a.base_type == 'Device' for a in op.schema.arguments)
               for op in dispatcher.all_ops().values())


@pytest.mark.parametrize('info,dtype', list(_cases()))
def test_values_match_cpu(info, dtype):
    for i, s in enumerate(info.samples(dtype)):
        args, kwargs = materialize(s, dtype, seed=i)
        factory = _is_factory(info) and not any(isinstance(x, np.ndarray) for x in flat(args) + flat(list(kwargs.values())))
        gkw = dict(kwargs, device='cuda') if factory else kwargs    # a factory's device argument picks the backend
        try:
            cpu = _run(info, args, kwargs, None)
        except Exception as e:
            with pytest.raises(type(e)):
                _run(info, args, gkw, 'cuda')
            continue
        gpu = _run(info, args, gkw, 'cuda')
        co, go = flat(cpu), flat(gpu)
        assert len(co) == len(go)
        for c, g in zip(co, go):
            _compare(c, g, info, dtype, f'{info.name}({s}) [{dtype}]')


def _grads(info, args, kwargs, device, seed):
    targs = to_lib(args, ember, requires_grad=True, device=device)
    tkw = to_lib(kwargs, ember, requires_grad=True, device=device)
    leaves = [x for x in flat(targs) + flat(list(tkw.values())) if isinstance(x, ember.Tensor) and x.requires_grad]
    leaves = [x for x in leaves if x.is_leaf] or leaves
    ember.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        out = [o for o in flat(call(info, ember, targs, tkw)) if isinstance(o, ember.Tensor) and o.requires_grad]
        if not out or not leaves:
            return None
        rng = np.random.default_rng(seed + 100)
        total = sum((o * ember.from_numpy(rng.uniform(-1, 1, tuple(o.shape))).to(o.device)).sum() for o in out)
        if total.is_complex():
            total = total.real + total.imag
        return ember.autograd.grad(total, leaves, allow_unused=True)


@pytest.mark.parametrize('info,dtype', list(_cases(lambda i: i.grad, lambda i: i.grad_dtypes)))
def test_grads_match_cpu(info, dtype):
    for i, s in enumerate(info.samples(dtype)):
        args, kwargs = materialize(s, dtype, seed=i)
        try:
            cg = _grads(info, args, kwargs, None, i)
        except (RuntimeError, IndexError, ValueError, TypeError):
            continue
        gg = _grads(info, args, kwargs, 'cuda', i)
        if cg is None:
            continue
        for k, (c, g) in enumerate(zip(cg, gg)):
            if c is None:
                assert g is None or np.allclose(_host(g), 0), f'{info.name}({s}) grad {k}'
                continue
            assert g.device.type == 'cuda', f'{info.name}({s}) grad {k} on {g.device}'
            # float64 to a few ulps; float32 (the operators with no float64 kernel, fake quantization) to the
            # rounding of a sum taken in another order (the gradient's reduction over the batch)
            tol = 1e-8 if c.dtype == ember.float64 else 1e-5
            np.testing.assert_allclose(_host(g), _host(c), rtol=tol, atol=tol * 1e-2, err_msg=f'{info.name}({s}) grad {k}')
