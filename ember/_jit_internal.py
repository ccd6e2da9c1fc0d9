"""torch._jit_internal: the markers TorchScript reads on functions (what to compile, ignore or copy onto a scripted
module's wrapper). ember compiles no TorchScript (NOTE in ember/jit), so the markers only record themselves, as
torch's do before a compiler looks at them; libraries import them to decorate their containers (pyro's
``_copy_to_script_wrapper`` on ModuleList-like classes).

>>> def f(self):
...     return 1
>>> _copy_to_script_wrapper(f)._torchscript_modifier is FunctionModifiers.COPY_TO_SCRIPT_WRAPPER
True
"""
import enum

from .jit import ignore, unused, export, is_scripting, _overload, _overload_method  # noqa: F401


class FunctionModifiers(str, enum.Enum):
    """How TorchScript treats a marked function."""
    UNUSED = 'unused: replaced by a raise'
    IGNORE = 'ignore: left as a Python call'
    EXPORT = 'export: compiled even when nothing calls it'
    DEFAULT = 'default: compiled when reached from forward or an exported method'
    COPY_TO_SCRIPT_WRAPPER = 'copy: kept as Python on the scripted module'
    _DROP = 'drop: ignored entirely'

def _copy_to_script_wrapper(fn):
    fn._torchscript_modifier = FunctionModifiers.COPY_TO_SCRIPT_WRAPPER
    return fn


def get_torchscript_modifier(fn):
    """The marker set on ``fn`` (DEFAULT when none)."""
    fn = getattr(fn, '__func__', fn)
    return getattr(fn, '_torchscript_modifier', FunctionModifiers.DEFAULT)
