"""Public random functions whose torch signatures cover several operator overloads: ``ember.normal``,
``ember.bernoulli``, ``ember.randint``, and the in-place ``Tensor`` fills (``uniform_``, ``normal_``,
``bernoulli_``, ``random_``, ...), which the registry declares as functional ops (see _ops/random_ops.py).
"""
from .._tensor import Tensor
from ..ops import aten

__all__ = ['normal', 'bernoulli', 'randint']


def _call(packet, overload, args, kwargs, out):
    if out is not None:
        return getattr(packet, f'{overload}_out' if overload else 'out')(*args, out=out, **kwargs)
    return getattr(packet, overload or 'default')(*args, **kwargs)


def _into(out, r):
    """Write a factory's result into ``out=`` (resized as torch does)."""
    return aten._resize_output_.default(out, r.shape, out.device).copy_(r)


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           pin_memory=False, requires_grad=False):
    """Samples from N(mean, std**2): tensor means and/or stds (broadcast), or floats with ``size``.

    >>> import ember
    >>> _ = ember.manual_seed(0); ember.normal(0.0, 1.0, (2, 3)).shape
    ember.Size([2, 3])
    """
    tm, ts = isinstance(mean, Tensor), isinstance(std, Tensor)
    if size is not None and (tm or ts):
        # only the (float, float, size) overload takes a size; torch's parser reads a 0-d tensor as its float
        if (tm and mean.dim()) or (ts and std.dim()):
            shown = ', '.join(type(v).__name__ if not isinstance(v, Tensor) else 'Tensor' for v in (mean, std, size))
            raise TypeError(f"normal() received an invalid combination of arguments - got ({shown}), but expected "
                            "one of: (Tensor mean, Tensor std), (Tensor mean, float std), (float mean, Tensor std), "
                            "(float mean, float std, tuple of ints size)")
        mean, std, tm, ts = float(mean), float(std), False, False
    if tm and ts:
        r = _call(aten.normal, 'Tensor_Tensor', (mean, std), {'generator': generator}, out)
    elif tm:
        r = _call(aten.normal, 'Tensor_float', (mean, float(std)), {'generator': generator}, out)
    elif ts:
        r = _call(aten.normal, 'float_Tensor', (float(mean), std), {'generator': generator}, out)
    else:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got (float, float), but "
                            "expected one of: (Tensor mean, Tensor std), (Tensor mean, float std), (float mean, "
                            "Tensor std), (float mean, float std, tuple of ints size)")
        r = aten.normal.float_float(float(mean), float(std), tuple(size), generator=generator, dtype=dtype,
                                       device=device)
        if out is not None:
            return _into(out, r)
    if requires_grad:
        r.requires_grad_(True)
    return r


def bernoulli(input, p=None, *, generator=None, out=None):
    """Draws 0/1 samples: with probabilities ``input`` (or the float ``p``), in ``input``'s dtype.

    >>> import ember
    >>> ember.bernoulli(ember.ones(3)).tolist()
    [1.0, 1.0, 1.0]
    """
    if p is None:
        return _call(aten.bernoulli, '', (input,), {'generator': generator}, out)
    r = aten.bernoulli.p(input, float(p), generator=generator)
    return r if out is None else _into(out, r)


def randint(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None, pin_memory=False,
            requires_grad=False, low=None, high=None):
    """``randint(high, size)`` or ``randint(low, high, size)``: integers in [low, high) (int64 unless ``dtype``).

    >>> import ember
    >>> ember.randint(3, 5, (4,)).shape
    ember.Size([4])
    """
    args = list(args)
    if size is None and args and isinstance(args[-1], (tuple, list)):
        size = args.pop()
    if high is None and args:
        high = args.pop()
    if low is None:
        low = args.pop() if args else 0
    if size is None or high is None or args:
        raise TypeError("randint() received an invalid combination of arguments - expected one of: (int high, "
                        "tuple of ints size, *, torch.Generator generator, ...), (int low, int high, tuple of ints "
                        "size, *, torch.Generator generator, ...)")
    if not all(-2 ** 63 <= int(b) < 2 ** 63 for b in (low, high)):
        raise ValueError("Overflow when unpacking long long")     # torch's argument parser, for an int past int64
    r = aten.randint.low(int(low), int(high), tuple(size), generator=generator, dtype=dtype, device=device)
    if out is not None:
        return _into(out, r)
    if requires_grad:
        r.requires_grad_(True)
    return r


# --- Tensor methods ---------------------------------------------------------------------------------

def _bernoulli_method(self, p=None, *, generator=None):
    if p is None:
        return aten.bernoulli.default(self, generator=generator)
    if isinstance(p, Tensor):
        return aten.bernoulli.Tensor(self, p, generator=generator)
    return aten.bernoulli.p(self, float(p), generator=generator)


def _bernoulli_(self, p=0.5, *, generator=None):
    if isinstance(p, Tensor):
        return aten.bernoulli_.Tensor(self, p, generator=generator)
    return aten.bernoulli_.p(self, float(p), generator=generator)


def _random_(self, *args, generator=None, **kwargs):
    """``random_()``, ``random_(to)``, ``random_(from, to)``: integers in [from, to) in ``self``'s dtype."""
    frm, to = 0, None
    if len(args) == 1:
        to = args[0]
    elif len(args) == 2:
        frm, to = args
    frm = kwargs.pop('from', frm)
    to = kwargs.pop('to', to)
    if kwargs or len(args) > 2:
        raise TypeError(f"random_() received an invalid combination of arguments")
    return aten.random_.from_(self, int(frm), None if to is None else int(to), generator=generator)


def _uniform_(self, *args, generator=None, **kwargs):
    if 'from' in kwargs:
        kwargs['from_'] = kwargs.pop('from')
    return aten.uniform_.default(self, *args, generator=generator, **kwargs)


Tensor.bernoulli = _bernoulli_method
Tensor.bernoulli_ = _bernoulli_
Tensor.random_ = _random_
Tensor.uniform_ = _uniform_
Tensor.normal_ = aten.normal_functional_.default.call     # .call: the entry point, a function that binds as a method
for _name in ('exponential_', 'geometric_', 'cauchy_', 'log_normal_'):
    setattr(Tensor, _name, getattr(aten, _name).default.call)
