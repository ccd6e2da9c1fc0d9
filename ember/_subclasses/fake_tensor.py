"""FakeTensorMode: run operators on tensors that have shapes, dtypes and strides but no data.

torch's FakeTensor is a tensor subclass that reports a real device (``cpu``) while its storage is on
``meta``. ember's stand-in is the meta tensor itself: ``FakeTensorMode.from_tensor(t)`` is a meta tensor with
``t``'s sizes, strides, dtype and ``requires_grad``, and the mode, a dispatch mode like any user could write,
moves every operator onto the Meta backend: a real tensor argument (a module's parameter captured by the
traced code) is replaced by its fake twin, and a ``device=`` argument by ``meta``, so factories
(``ember.zeros(3)``) and copies (``x.to('cpu')``) allocate nothing. The Meta backend runs each operator's
meta function, the same shape rule and error checks every backend runs, so a program that fails on real
data fails the same way here, and no element is ever read or written.

The one difference from torch a reader sees is ``t.device``: ``meta`` rather than the device the fake tensor
stands for. ``make_fx(tracing_mode='fake')`` writes that device (``fake_device``, the inputs' device) into
the graph wherever the program named ``meta``.

>>> import ember
>>> from ember._subclasses.fake_tensor import FakeTensorMode
>>> mode = FakeTensorMode()
>>> x = mode.from_tensor(ember.randn(1000, 1000))
>>> with mode:
...     y = (x @ x).relu() + ember.ones(1000)
>>> y.shape, y.device.type
(ember.Size([1000, 1000]), 'meta')
"""
import contextlib
import weakref

import ember
from ember.utils._python_dispatch import TorchDispatchMode

__all__ = ['FakeTensorMode', 'FakeTensor', 'FakeTensorConverter', 'is_fake', 'unset_fake_temporarily']

_META = ember.device('meta')
_MODE_OF = {}       # id(fake twin) -> (weakref to it, the mode that made it): torch's FakeTensor.fake_mode


def mode_of(t):
    """The FakeTensorMode whose ``from_tensor`` made ``t``, or None."""
    hit = _MODE_OF.get(id(t))
    return hit[1] if hit is not None and hit[0]() is t else None
_HAS_DEVICE_ARG = {}      # OpOverload -> (has a `device` argument, has tensor arguments)


def is_fake(t):
    """Whether ``t`` is one of ember's fake tensors (a meta tensor)."""
    return isinstance(t, ember.Tensor) and t.device.type == 'meta'


class _FakeTensorMeta(type):
    def __instancecheck__(cls, obj):
        return is_fake(obj)


class FakeTensor(ember.Tensor, metaclass=_FakeTensorMeta):
    """The class torch's fake tensors have. ember's fake tensor is an ordinary Tensor on the meta device (see
    above), so ``isinstance(t, FakeTensor)`` asks ``is_fake(t)``: a real tensor is no FakeTensor (transformers
    takes every tensor that is one for a trace in progress)."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("ember's fake tensors are meta tensors: make one with FakeTensorMode().from_tensor(t)")


@contextlib.contextmanager
def unset_fake_temporarily():
    """Leave the innermost FakeTensorMode for the block (real tensors are made and computed on again); yields
    that mode, or None when none is on."""
    from ember._guards import detect_fake_mode
    mode = detect_fake_mode()
    if mode is None:
        yield None
        return
    mode.__exit__(None, None, None)
    try:
        yield mode
    finally:
        mode.__enter__()


class FakeTensorMode(TorchDispatchMode):
    """Every operator inside ``with FakeTensorMode():`` runs on the Meta backend (see the module docstring).

    ``fake_device`` is the device the fake tensors stand for (the device of the first real tensor given to
    ``from_tensor``, else ``cpu``).
    """
    sees_composites = True      # shapes and dtypes are the same either way; one meta call is cheaper

    def __init__(self, *, allow_non_fake_inputs=True, fake_device=None, shape_env=None):
        self.allow_non_fake_inputs = allow_non_fake_inputs
        self.shape_env = shape_env        # where symbolic sizes come from (NOTE [symbolic sizes]), or None
        self.fake_device = None if fake_device is None else ember.device(fake_device)
        self._memo = {}      # id(real tensor) -> (weakref to it, its fake twin)

    def from_tensor(self, t, symbolic_dims=()):
        """The fake twin of ``t`` (the same one each time it is asked for while ``t`` lives). ``symbolic_dims``:
        dimensions whose size becomes a symbol of ``shape_env`` (a contiguous ``t`` only)."""
        hit = self._memo.get(id(t))
        if hit is not None and hit[0]() is t:
            return hit[1]
        if symbolic_dims:
            return self._symbolic(t, symbolic_dims)
        if t.device.type == 'meta':
            return t
        if self.fake_device is None:
            self.fake_device = t.device
        fake = ember.empty_strided(tuple(t.shape), t.stride(), dtype=t.dtype, device=_META)
        if isinstance(t, ember.nn.Parameter):
            fake = ember.nn.Parameter(fake, requires_grad=t.requires_grad)
        elif t.requires_grad:
            fake.requires_grad_(True)
        self._memo[id(t)] = (weakref.ref(t), fake)
        _MODE_OF[id(fake)] = (weakref.ref(fake, lambda _, k=id(fake): _MODE_OF.pop(k, None)), self)
        return fake

    def _fake(self, a):
        if isinstance(a, ember.Tensor):
            if a.device.type == 'meta':
                return a
            if not self.allow_non_fake_inputs:
                raise RuntimeError(f'Please convert all Tensors to FakeTensors first (FakeTensorMode.from_tensor) '
                                   f'or instantiate FakeTensorMode with allow_non_fake_inputs=True. Found a '
                                   f'{a.device.type} tensor of shape {tuple(a.shape)}.')
            return self.from_tensor(a)
        if isinstance(a, list):
            return [self._fake(e) for e in a]
        if isinstance(a, tuple) and not hasattr(a, '_fields'):
            return tuple(self._fake(e) for e in a)
        return a

    def __ember_dispatch__(self, func, types, args=(), kwargs=None):
        args = tuple(self._fake(a) for a in args)
        kwargs = {k: self._fake(v) for k, v in kwargs.items()} if kwargs else {}
        info = _HAS_DEVICE_ARG.get(func)
        if info is None:
            names = {a.name for a in func.schema.arguments}
            info = _HAS_DEVICE_ARG[func] = ('device' in names, bool(func.schema.tensor_args))
        if info[0] and (kwargs.get('device') is not None or not info[1]):
            kwargs['device'] = _META      # a factory (or a copy to a device) allocates nothing
        return func(*args, **kwargs)

    def _symbolic(self, t, dims):
        """The fake twin of ``t`` with symbolic sizes (NOTE [symbolic sizes]). ``dims``: dimensions that get a new
        symbol each, or ``{dim: SymInt or None}`` (None: a new symbol; a SymInt made by ``ShapeEnv.input_size``
        or a shared symbol: that size), or ``'duck'``: every dimension but those of size 0 or 1, with equal sizes
        sharing a symbol (make_fx's symbolic mode, as torch). Strides follow ``t``'s memory order; ``t`` must be
        dense (no gaps, no overlap)."""
        env = self.shape_env
        if env is None:
            raise RuntimeError('FakeTensorMode.from_tensor(symbolic_dims=...) needs a FakeTensorMode(shape_env=...)')
        sizes, strides = list(t.shape), list(t.stride())
        order = sorted(range(len(sizes)), key=lambda d: (-strides[d], -d))       # outermost first
        acc = 1
        for d in reversed(order):
            if sizes[d] > 1 and strides[d] != acc:
                raise ValueError(f'symbolic sizes are given to dense tensors only (a tensor of shape {sizes} and '
                                 f'strides {strides} has gaps or overlaps): pass x.contiguous()')
            acc *= sizes[d]
        if self.fake_device is None and t.device.type != 'meta':
            self.fake_device = t.device
        if dims == 'duck':
            dims = {d: env.create_symbol(n, None, d, duck=True) for d, n in enumerate(sizes) if n > 1}
        elif not isinstance(dims, dict):
            dims = {d: None for d in dims}
        for d, s in dims.items():
            sizes[d] = env.create_symbol(sizes[d], None, d) if s is None else s
        new_strides, acc = [0] * len(sizes), 1
        for d in reversed(order):
            new_strides[d] = acc
            acc = acc * sizes[d]
        fake = ember.empty_strided(tuple(sizes), tuple(new_strides), dtype=t.dtype, device=_META)
        for d, s in enumerate(sizes):           # a symbol with no source yet stands for this size of this input
            how = getattr(s, 'how', None)
            if how is not None and how[0] == 'size' and how[1] is None:
                s.how = ('size', fake, d)
        if t.requires_grad:
            fake.requires_grad_(True)
        self._memo[id(t)] = (weakref.ref(t), fake)
        _MODE_OF[id(fake)] = (weakref.ref(fake, lambda _, k=id(fake): _MODE_OF.pop(k, None)), self)
        return fake


class FakeTensorConverter:
    """Turns real tensors into a mode's fake ones and remembers the pairs (torch's converter, which a
    FakeTensorMode owns): ``from_real_tensor(mode, t)`` gives the same fake tensor for the same live ``t``.

    >>> mode = FakeTensorMode()
    >>> conv, t = FakeTensorConverter(), ember.ones(2, 3)
    >>> f = conv.from_real_tensor(mode, t)
    >>> f.shape, f.device.type, conv.from_real_tensor(mode, t) is f
    (ember.Size([2, 3]), 'meta', True)
    """

    def __init__(self, *, copy_data=False, export=False):
        self.copy_data, self.export = copy_data, export
        self.tensor_memo = {}       # id(real tensor) -> (weakref to it, its fake twin)

    def _get_memo(self, t):
        hit = self.tensor_memo.get(id(t))
        return hit[1] if hit is not None and hit[0]() is t else None

    def set_tensor_memo(self, t, v):
        self.tensor_memo[id(t)] = (weakref.ref(t, lambda _, k=id(t): self.tensor_memo.pop(k, None)), v)

    def from_real_tensor(self, fake_mode, t, make_constant=False, shape_env=None, *, source=None,
                         symbolic_context=None, trace=True):
        """The fake twin of ``t`` in ``fake_mode``."""
        fake = self._get_memo(t)
        if fake is None:
            fake = fake_mode.from_tensor(t)
            self.set_tensor_memo(t, fake)
        return fake

    def from_meta_and_device(self, fake_mode, t, device):
        """A fake tensor for the meta tensor ``t``, standing for ``device``."""
        if t.device.type != 'meta':
            raise AssertionError(f"tensor's device must be `meta`, got {t.device.type} instead")
        if fake_mode.fake_device is None:
            fake_mode.fake_device = ember.device(device)
        return t
