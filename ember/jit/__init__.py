"""ember.jit: deliberately absent. TorchScript compiles Python into a static IR that ember has no compiler
for; graph capture is issue 11 (ember.fx, export) and compilation issue 12 (ember.compile). Every name
raises an error saying so, rather than silently running eager code under a TorchScript name. The names that
only matter to the TorchScript compiler (``ignore``, ``unused``, ``export``, ``interface``, ``annotate``,
``Final``, ``is_scripting``) behave as they do in eager torch code: they return their argument (or False)."""


from .._absent import absent


def _absent(name):
    return absent(f'ember.jit.{name}', " (TorchScript) is not available in ember: it has no TorchScript compiler. "
                  "Run the function or module eagerly; graph capture is tracked as issue 11 and compilation as "
                  "issue 12.")


script = _absent('script')
trace = _absent('trace')
trace_module = _absent('trace_module')
load = _absent('load')
save = _absent('save')
freeze = _absent('freeze')
optimize_for_inference = _absent('optimize_for_inference')
script_method = _absent('script_method')


def ignore(drop=False, **kwargs):
    """Eager code runs ``@torch.jit.ignore`` functions as they are."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    return fn


def annotate(the_type, the_value):
    """``torch.jit.annotate(List[int], [])``: a type hint for TorchScript; eager code gets the value back."""
    return the_value


def export(fn):
    """``@torch.jit.export``: marks a method for the TorchScript compiler; eagerly the method itself."""
    return fn


def interface(obj):
    """``@torch.jit.interface``: a TorchScript interface type; eagerly the class itself."""
    return obj


def is_scripting():
    """False: ember never runs code under TorchScript."""
    return False


def is_tracing():
    return False


class Final:
    """``torch.jit.Final[int]``: a type annotation, meaningful only to TorchScript."""

    def __class_getitem__(cls, item):
        return item


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    return _absent(name)
