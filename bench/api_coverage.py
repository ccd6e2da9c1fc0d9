"""How much of torch 2.13's public API ember has, per namespace.

    python bench/api_coverage.py                 # the table (counts and %)
    python bench/api_coverage.py --missing torch.nn.functional   # the names one namespace lacks
    python bench/api_coverage.py --markdown      # the table as Markdown, for COMPAT.md

A namespace's public names are torch's ``dir()`` without underscore names and
without modules from outside torch (``torch.os`` is not API); a Tensor's are
its methods and properties. A name counts as present when ember's namesake
(``ember.nn.functional.<name>``, ``ember.Tensor.<name>``, or the submodule
``ember.<path>.<name>``) exists. Needs torch installed (the test extra); ember
itself never imports it.
"""
import argparse
import importlib
import os
import sys
import types

# the ember of this checkout, not an installed one
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

NAMESPACES = ['torch', 'torch.Tensor', 'torch.nn', 'torch.nn.functional', 'torch.nn.init', 'torch.nn.utils',
              'torch.optim', 'torch.optim.lr_scheduler', 'torch.utils.data', 'torch.linalg', 'torch.special',
              'torch.fft', 'torch.distributions', 'torch.autograd', 'torch.amp', 'torch.cuda', 'torch.backends',
              'torch.multiprocessing', 'torch.accelerator', 'torch.fx', 'torch.func', 'torch.distributed', 'torch.export',
              'torch.onnx', 'torch.profiler']


def _torch_obj(path):
    import torch
    if path == 'torch.Tensor':
        return torch.Tensor
    return importlib.import_module(path)


def public_names(path):
    """torch's public names in ``path``: no underscores, no foreign modules."""
    obj = _torch_obj(path)
    out = []
    for n in dir(obj):
        if n.startswith('_'):
            continue
        try:
            v = getattr(obj, n)
        except Exception:   # noqa: BLE001  a lazy attribute that fails to load is not usable API
            continue
        if isinstance(v, types.ModuleType) and not v.__name__.startswith('torch'):
            continue
        if n == 'TYPE_CHECKING' or getattr(v, '__module__', None) in ('typing', 'typing_extensions'):
            continue        # type-annotation helpers imported into the namespace, not its API
        out.append(n)
    return sorted(out)


def _ember_obj(path):
    import ember
    if path == 'torch.Tensor':
        return ember.Tensor
    try:
        return importlib.import_module('ember' + path[len('torch'):])
    except ImportError:
        return None


def has(ember_obj, path, name):
    if ember_obj is None:
        return False
    if hasattr(ember_obj, name):
        return True
    if path != 'torch.Tensor':
        try:
            importlib.import_module(f"ember{path[len('torch'):]}.{name}")
            return True
        except ImportError:
            return False
    return False


def coverage(path):
    names = public_names(path)
    e = _ember_obj(path)
    missing = [n for n in names if not has(e, path, n)]
    return len(names), len(names) - len(missing), missing


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--missing', metavar='NS', help='list the names namespace NS (e.g. torch.nn) lacks')
    ap.add_argument('--markdown', action='store_true', help='print the table as Markdown')
    a = ap.parse_args(argv)
    import torch
    if a.missing:
        total, got, missing = coverage(a.missing)
        print(f'{a.missing}: {got}/{total} present; missing {len(missing)}:')
        for n in missing:
            print(f'  {n}')
        return 0
    rows = [(ns, *coverage(ns)[:2]) for ns in NAMESPACES]
    T = sum(r[1] for r in rows)
    G = sum(r[2] for r in rows)
    if a.markdown:
        print(f'| namespace (torch {torch.__version__.split("+")[0]}) | torch names | in ember | coverage |')
        print('|---|---:|---:|---:|')
        for ns, total, got in rows:
            print(f'| `{ns}` | {total} | {got} | {100 * got / max(total, 1):.0f}% |')
        print(f'| **all** | {T} | {G} | {100 * G / T:.0f}% |')
    else:
        print(f'{"namespace":28s} {"torch":>6s} {"ember":>6s} {"cover":>6s}')
        for ns, total, got in rows:
            print(f'{ns:28s} {total:6d} {got:6d} {100 * got / max(total, 1):5.0f}%')
        print(f'{"all":28s} {T:6d} {G:6d} {100 * G / T:5.0f}%')
    return 0


if __name__ == '__main__':
    sys.exit(main())
