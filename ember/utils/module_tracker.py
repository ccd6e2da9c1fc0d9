"""torch.utils.module_tracker: which modules are running, in the forward and in the backward.

``ModuleTracker().parents`` is the set of the fully qualified names of the modules whose forward (or backward)
is running now, always with ``'Global'``. A module is named the way torch's tracker names it: the class name of
the outermost module it was first seen under, then the attribute path (``'Sequential.0'``).

The forward is followed with global forward pre/post hooks. The backward of a module is followed on the
tensors that cross its boundary: it starts when the gradients of its outputs have been computed and ends when
those of its inputs have; a backward that never reaches a module's inputs (an input that needs no gradient)
ends it when the whole backward ends, where ``parents`` goes back to ``{'Global'}``.

>>> import ember
>>> m = ember.nn.Sequential(ember.nn.Linear(2, 2))
>>> seen = []
>>> with ModuleTracker() as tracker:
...     _ = m[0].register_forward_pre_hook(lambda *_: seen.append(sorted(tracker.parents)))
...     _ = m(ember.ones(1, 2))
>>> seen, tracker.parents
([['Global', 'Sequential', 'Sequential.0']], {'Global'})
"""
import logging
import weakref

from ..autograd import engine
from ..autograd.graph import register_multi_grad_hook
from ..nn.modules.module import register_module_forward_pre_hook, register_module_forward_hook
from ._pytree import tree_flatten

__all__ = ['ModuleTracker']

logger = logging.getLogger(__name__)


def _grad_tensors(tree):
    from .._tensor import Tensor
    return [a for a in tree_flatten(tree)[0] if isinstance(a, Tensor) and a.requires_grad]


class ModuleTracker:
    """Context manager: ``parents`` holds the names of the modules running now (see the module docstring)."""

    def __init__(self):
        self.parents = {'Global'}
        self._known_modules = weakref.WeakKeyDictionary()     # module -> its name
        self._seen_modules = weakref.WeakSet()                # modules whose children are named
        self._has_callback = False
        self._hooks = []

    @property
    def is_bw(self):
        """Whether a backward is running now."""
        return engine.in_backward()

    def _maybe_set_engine_callback(self):
        if self._has_callback:
            return

        def callback():
            self.parents = {'Global'}
            self._has_callback = False

        engine.queue_callback(callback)
        self._has_callback = True

    def _get_mod_name(self, mod):
        if mod not in self._known_modules:
            self._known_modules[mod] = type(mod).__name__
        name = self._known_modules[mod]
        if mod not in self._seen_modules:
            for child_name, child in mod.named_children():
                self._known_modules[child] = f'{name}.{child_name}'
                self._get_mod_name(child)
            self._seen_modules.add(mod)
        return name

    def _get_append_fn(self, name, is_bw):
        def fn(*args):
            if is_bw:
                self._maybe_set_engine_callback()
            if name in self.parents:
                logger.info("The module hierarchy tracking seems to be broken as this Module was already entered. "
                            "%s during %s", name, 'backward' if is_bw else 'forward')
            self.parents.add(name)
        return fn

    def _get_pop_fn(self, name, is_bw):
        def fn(*args):
            if name in self.parents:
                self.parents.remove(name)
            else:
                logger.info("The Module hierarchy tracking is confused as we're exiting a Module that was never "
                            "entered. %s during %s", name, 'backward' if is_bw else 'forward')
        return fn

    def _fw_pre_hook(self, mod, input):
        name = self._get_mod_name(mod)
        self._get_append_fn(name, False)()
        tensors = _grad_tensors(input)
        if tensors:     # its backward ends with its inputs' gradients
            self._hooks.append(register_multi_grad_hook(tensors, self._get_pop_fn(name, True)))

    def _fw_post_hook(self, mod, input, output):
        name = self._get_mod_name(mod)
        self._get_pop_fn(name, False)()
        tensors = _grad_tensors(output)
        if tensors:     # and starts with its outputs'
            self._hooks.append(register_multi_grad_hook(tensors, self._get_append_fn(name, True)))

    def __enter__(self):
        self._fw_pre_handle = register_module_forward_pre_hook(self._fw_pre_hook)
        self._fw_post_handle = register_module_forward_hook(self._fw_post_hook)
        return self

    def __exit__(self, *args):
        self._fw_pre_handle.remove()
        self._fw_post_handle.remove()
        for hook in self._hooks:
            hook.remove()
        self._hooks.clear()
