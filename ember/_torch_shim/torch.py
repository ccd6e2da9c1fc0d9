"""``import torch`` in a child process of ``ember run``: resolve torch to ember there too.

NOTE [ember run in child processes]
``ember run`` puts this folder first on ``sys.path`` and on ``PYTHONPATH``.
The running process never reaches this file (its import hook answers
``torch`` first), but a child started with ``spawn`` or ``forkserver`` (a
DataLoader worker, a ``multiprocessing`` process) or any fresh interpreter the
program starts takes the parent's ``sys.path`` or environment, and its first
``import torch`` (usually while re-running the main script as ``__mp_main__``)
lands here: this module installs the same hook and hands the importer ember's
``torch`` alias in its own place. Forked children simply inherit the hook.
"""
import importlib
import sys

from ember import compat as _compat

_compat.install()                   # drops this half-made module from sys.modules and puts the hook first
sys.modules[__name__] = importlib.import_module(__name__)    # the importer receives the alias, not this file
