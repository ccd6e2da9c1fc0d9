"""The compiler's stance (torch.compiler.set_stance): how ``ember.compile``'d callables treat a call.

NOTE [compiler stance] -- one process-wide setting, as torch's, read by ``CompiledFunction.__call__``:

* ``'default'``: capture, guard and recompile as NOTE [capture and guards] says; ``force_backend`` makes every
  compiled callable compile with that backend instead of its own (a cache of its own per backend);
* ``'force_eager'``: every compiled callable runs its function eagerly, compiling nothing;
* ``'eager_on_recompile'``: a call that a compiled version's guards accept runs it; one that would compile
  (recompile) runs eagerly instead;
* ``'fail_on_recompile'``: a call that would compile (the first one too) raises RuntimeError, naming the
  failed guard;
* ``'eager_then_compile'`` / ``'aot_eager_then_compile'``: a callable's first call runs eagerly, later ones
  compile (ember has no separate AOT-eager warm-up: its first call is eager as well);
* ``skip_guard_eval_unsafe=True``: only the guards that tell versions apart run (the argument key: sizes,
  dtypes, grad mode); the module ``training`` flags and the shapes of the parameters the graph reads are not
  checked. Unsafe as in torch: a change only those guards would catch runs a stale version.

Setting it while ``ember.compile`` traces raises AssertionError (not a graph break), as torch's does. An unknown stance is
accepted by ``set_stance`` and raises at the next compiled call, as torch's.
"""
from dataclasses import dataclass
from typing import Any

from ..autograd.grad_mode import _DecoratorContextManager

__all__ = ['set_stance', 'DynamoStance']

STANCES = ('default', 'force_eager', 'eager_on_recompile', 'fail_on_recompile', 'eager_then_compile',
           'aot_eager_then_compile')


@dataclass
class DynamoStance:
    stance: str = 'default'
    skip_guard_eval_unsafe: bool = False
    backend: Any = None


_current = [DynamoStance()]
plain = [True]          # the default stance with no option: CompiledFunction.__call__'s one check


def current():
    """The stance in force; raises for an unknown one (at the compiled call, as torch)."""
    s = _current[0]
    if s.stance not in STANCES:
        raise RuntimeError(f"invalid torch.compile stance '{s}'")
    return s


def _set_stance(stance):
    from .eval_frame import _tracing
    if _tracing.on:
        from .exc import ForbiddenCall
        raise ForbiddenCall(f'Attempt to trace forbidden callable {set_stance}: set_stance cannot be called '
                            'inside a torch.compile region; set it before calling the compiled function')
    prior, _current[0] = _current[0], stance
    plain[0] = stance == DynamoStance()
    return prior


class set_stance(_DecoratorContextManager):
    """Set the compiler's stance (NOTE [compiler stance]): called, it sets it until the next call; as a context
    manager or decorator, for the block or the function only.

    >>> import ember
    >>> f = ember.compile(lambda x: x.sin(), backend='eager')
    >>> with ember.compiler.set_stance('force_eager'):
    ...     f(ember.zeros(2))
    tensor([0., 0.])
    """

    def __init__(self, stance='default', *, skip_guard_eval_unsafe=False, force_backend=None):
        if force_backend is not None and stance != 'default':
            raise RuntimeError('non-default stance cannot have force_backend set')
        self.stance = DynamoStance(stance, skip_guard_eval_unsafe, force_backend)
        self.prev = _set_stance(self.stance)

    def __call__(self, fn):
        _set_stance(self.prev)          # as a decorator it sets the stance only while ``fn`` runs
        return super().__call__(fn)

    def __enter__(self):
        _set_stance(self.stance)

    def __exit__(self, *exc):
        _set_stance(self.prev)

    def clone(self):
        return self.__class__(self.stance.stance, skip_guard_eval_unsafe=self.stance.skip_guard_eval_unsafe,
                              force_backend=self.stance.backend)
