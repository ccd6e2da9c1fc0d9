"""NOTE [warning location]: torch's warnings point at the user's line (its C++ warnings carry the Python caller's
frame, and its Python ones pick their stacklevel). ember's come from several frames deep: generated entry
points (``<ember op ...>``), the ``__torch_function__`` wrapper of a public function, composites calling
composites. So ember's modules import ``warnings`` from here: the same module, except that ``warn`` attributes
the warning to the first frame outside ember (its ``stacklevel`` argument counts only when every frame is
ember's). Python 3.12's ``skip_file_prefixes`` does this; ember runs on 3.11 too."""
import os
import sys
import types
import warnings as _warnings

_ROOT = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _internal(filename):
    return filename.startswith(_ROOT) or filename.startswith('<ember ')


def warn(message, category=None, stacklevel=1, source=None):
    frame, level = sys._getframe(1), 2      # 2: the caller of this function
    while frame is not None and _internal(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    if frame is None:
        level = stacklevel + 1
    _warnings.warn(message, category, stacklevel=level, source=source)


_WARNED_ONCE = set()


def warn_once(message, category=None):
    """torch's C++ TORCH_WARN_ONCE: the first call in the process warns, at the user's line; later ones do not,
    from whichever line they come."""
    if message not in _WARNED_ONCE:
        _WARNED_ONCE.add(message)
        warn(message, category)


def warn_in_library(message, category=None, stacklevel=1):
    """Python's own ``warnings.warn``: for the warnings torch raises from its Python code at one of its own frames
    (a constructor's deprecation, weight_norm's FutureWarning), which point at torch's file and so are shown once
    per process under the default filter, however many user lines reach them."""
    _warnings.warn(message, category, stacklevel=stacklevel + 1)


warnings = types.ModuleType('warnings', _warnings.__doc__)
warnings.__dict__.update({k: v for k, v in _warnings.__dict__.items() if not k.startswith('__')})
warnings.warn = warn
warnings.warn_once = warn_once
warnings.warn_in_library = warn_in_library
