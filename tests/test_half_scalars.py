"""float16/bfloat16 tensors with Python numbers and 0-d tensors of other dtypes against torch, bit for bit
(NOTE [half-precision scalars] in ember/_ops/adapters.py): which ops round the number to the tensor's dtype
first (add, sub, rsub, alpha, remainder, fmod, pow, comparisons, ``_foreach_mul_``) and which compute with it in
float32 (mul, div and its rounding modes, lerp, addcmul, addcdiv), for numbers, 0-d float32/float64 tensors,
in-place, reflected and ``_foreach_`` forms."""
import numpy as np
import pytest
import torch

import ember

N = 4096            # a multiple of torch's vector width and below its grain: every element takes the vector path
SCALARS = (0.7071067811865476, 1.0001, 3.3, 1e-3, -6.8946, 4.0848, 1 / 3, 100.3, 2.0)
DTYPES = ('float16', 'bfloat16')


def _data(dtype, seed):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(N) * np.exp(rng.standard_normal(N) * 2)).astype(np.float32)
    return torch.from_numpy(a).to(getattr(torch, dtype)), ember.from_numpy(a).to(getattr(ember, dtype))


def _np(t):
    t = t.detach()
    return (t.float() if t.dtype not in (torch.bool, ember.bool) else t).numpy()


def _check(fn, dtype, scalars=SCALARS, seed=0):
    (tx, ex), (ty, ey) = _data(dtype, seed), _data(dtype, seed + 1)
    for s in scalars:
        r = fn(torch, tx.clone(), ty.clone(), s)
        o = fn(ember, ex.clone(), ey.clone(), s)
        assert str(o.dtype).split('.')[-1] == str(r.dtype).split('.')[-1], (s, o.dtype, r.dtype)
        np.testing.assert_array_equal(_np(o), _np(r), err_msg=f'scalar {s!r}')


def _ip(f):
    """An in-place operator's result: the tensor it wrote."""
    def g(m, x, y, s):
        f(m, x, y, s)
        return x
    return g


CASES = {
    # rounded to the tensor's dtype first
    't + s': lambda m, x, y, s: x + s,
    's + t': lambda m, x, y, s: s + x,
    'add(t, s)': lambda m, x, y, s: m.add(x, s),
    't.add_(s)': _ip(lambda m, x, y, s: x.add_(s)),
    't - s': lambda m, x, y, s: x - s,
    't.sub_(s)': _ip(lambda m, x, y, s: x.sub_(s)),
    's - t': lambda m, x, y, s: s - x,
    'rsub(t, s)': lambda m, x, y, s: m.rsub(x, s),
    'add(t, u, alpha=s)': lambda m, x, y, s: x.add(y, alpha=s),
    't.add_(u, alpha=s)': _ip(lambda m, x, y, s: x.add_(y, alpha=s)),
    'sub(t, u, alpha=s)': lambda m, x, y, s: x.sub(y, alpha=s),
    'rsub(t, u, alpha=s)': lambda m, x, y, s: m.rsub(x, y, alpha=s),
    'rsub(t, 0.3, alpha=s)': lambda m, x, y, s: m.rsub(x, 0.3, alpha=s),
    'add(t, 1.0, alpha=s)': lambda m, x, y, s: m.add(x, 1.0, alpha=s),
    'add(t, 0.3, alpha=s)': lambda m, x, y, s: m.add(x, 0.3, alpha=s),
    't % s': lambda m, x, y, s: x % s,
    'fmod(t, s)': lambda m, x, y, s: m.fmod(x, s),
    '|t| ** s': lambda m, x, y, s: x.abs() ** s,
    '|s| ** t': lambda m, x, y, s: abs(s) ** x.clamp(-20, 20),
    't == s': lambda m, x, y, s: m.cat([x, x.new_tensor([s]).to(x.dtype)]) == s,
    't < s': lambda m, x, y, s: x < s,
    't <= s': lambda m, x, y, s: x <= s,
    'clamp(t, min=s)': lambda m, x, y, s: x.clamp(min=s),
    'clamp(t, max=s)': lambda m, x, y, s: x.clamp(max=s),
    't + tensor(s) f32': lambda m, x, y, s: x + m.tensor(s),
    't + tensor(s) f64': lambda m, x, y, s: x + m.tensor(s, dtype=m.float64),
    't - tensor(s) f32': lambda m, x, y, s: x - m.tensor(s),
    'mul(tensor(s), t)': lambda m, x, y, s: m.mul(m.tensor(s), x),
    'div(tensor(s), t)': lambda m, x, y, s: m.div(m.tensor(s), x),
    'maximum(t, tensor(s))': lambda m, x, y, s: m.maximum(x, m.tensor(s)),
    # kept in float32
    't * s': lambda m, x, y, s: x * s,
    's * t': lambda m, x, y, s: s * x,
    'mul(t, s)': lambda m, x, y, s: m.mul(x, s),
    't.mul_(s)': _ip(lambda m, x, y, s: x.mul_(s)),
    't / s': lambda m, x, y, s: x / s,
    't.div_(s)': _ip(lambda m, x, y, s: x.div_(s)),
    's / t': lambda m, x, y, s: s / x,
    't // s': lambda m, x, y, s: x // s,
    'div(t, s, floor)': lambda m, x, y, s: m.div(x, s, rounding_mode='floor'),
    'div(t, s, trunc)': lambda m, x, y, s: m.div(x, s, rounding_mode='trunc'),
    't * tensor(s) f32': lambda m, x, y, s: x * m.tensor(s),
    't * tensor(s) f64': lambda m, x, y, s: x * m.tensor(s, dtype=m.float64),
    't / tensor(s) f32': lambda m, x, y, s: x / m.tensor(s),
    't.mul_(tensor(s))': _ip(lambda m, x, y, s: x.mul_(m.tensor(s))),
    't.div_(tensor(s))': _ip(lambda m, x, y, s: x.div_(m.tensor(s))),
    'lerp(t, u, s)': lambda m, x, y, s: m.lerp(x, y, s),
    'addcmul(t, u, t, value=s)': lambda m, x, y, s: m.addcmul(x, y, x, value=s),
    'addcdiv(t, u, t, value=s)': lambda m, x, y, s: m.addcdiv(x, y, x, value=s),
    # the _foreach_ family (add/sub round; mul/div keep float32, except _foreach_mul_ with numbers, which rounds)
    '_foreach_add S': lambda m, x, y, s: m._foreach_add([x], s)[0],
    '_foreach_add_ S': _ip(lambda m, x, y, s: m._foreach_add_([x], s)),
    '_foreach_add SL': lambda m, x, y, s: m._foreach_add([x], [s])[0],
    '_foreach_add_ SL': _ip(lambda m, x, y, s: m._foreach_add_([x], [s])),
    '_foreach_add T': lambda m, x, y, s: m._foreach_add([x], m.tensor(s))[0],
    '_foreach_add L alpha': lambda m, x, y, s: m._foreach_add([x], [y], alpha=s)[0],
    '_foreach_add_ L alpha': _ip(lambda m, x, y, s: m._foreach_add_([x], [y], alpha=s)),
    '_foreach_sub S': lambda m, x, y, s: m._foreach_sub([x], s)[0],
    '_foreach_sub_ SL': _ip(lambda m, x, y, s: m._foreach_sub_([x], [s])),
    '_foreach_mul S': lambda m, x, y, s: m._foreach_mul([x], s)[0],
    '_foreach_mul SL': lambda m, x, y, s: m._foreach_mul([x], [s])[0],
    '_foreach_mul_ S': _ip(lambda m, x, y, s: m._foreach_mul_([x], s)),
    '_foreach_mul_ SL': _ip(lambda m, x, y, s: m._foreach_mul_([x], [s])),
    '_foreach_mul T': lambda m, x, y, s: m._foreach_mul([x], m.tensor(s))[0],
    '_foreach_mul_ T': _ip(lambda m, x, y, s: m._foreach_mul_([x], m.tensor(s))),
    '_foreach_div S': lambda m, x, y, s: m._foreach_div([x], s)[0],
    '_foreach_div_ S': _ip(lambda m, x, y, s: m._foreach_div_([x], s)),
    '_foreach_div_ SL': _ip(lambda m, x, y, s: m._foreach_div_([x], [s])),
    '_foreach_div T': lambda m, x, y, s: m._foreach_div([x], m.tensor(s))[0],
    '_foreach_lerp S': lambda m, x, y, s: m._foreach_lerp([x], [y], s)[0],
    '_foreach_addcmul S': lambda m, x, y, s: m._foreach_addcmul([x], [y], [x], s)[0],
    '_foreach_addcdiv S': lambda m, x, y, s: m._foreach_addcdiv([x], [y], [x], s)[0],
    '_foreach_pow S': lambda m, x, y, s: m._foreach_pow([x.abs()], s)[0],
}


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('case', list(CASES))
def test_half_with_scalar(case, dtype):
    _check(CASES[case], dtype)


@pytest.mark.parametrize('dtype', DTYPES)
def test_pow_special_exponents(dtype):
    """torch's pow kernel special-cases these exponents; bfloat16 ** 3 and ** -2 round after every step."""
    _check(lambda m, x, y, s: x.abs() ** s, dtype, (2.0, 3.0, 0.5, -0.5, -1.0, -2.0, 2, 3, -3.0, 4.0))


@pytest.mark.parametrize('dtype', DTYPES)
def test_integer_scalars(dtype):
    ints = (3, 1001, 4097, -257, 70000)
    for f in (CASES['t + s'], CASES['t * s'], CASES['t / s'], CASES['t - s'], CASES['t + tensor(s) f32']):
        _check(f, dtype, ints)


def test_repro_values():
    """The reported values: bf16 1 + 0.7071... is 1.703125 (the number rounded to 0.70703125 first, then a
    tie to even); fp16 -3 / 3.3 is -0.9091796875 (3.3 kept in float32)."""
    b = ember.tensor([1.0], dtype=ember.bfloat16)
    assert (b + 0.7071067811865476).item() == 1.703125
    assert (b - 1.0001).item() == 0.0
    assert (ember.tensor([-3.0], dtype=ember.float16) / 3.3).item() == -0.9091796875
