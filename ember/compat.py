"""Run unmodified PyTorch scripts on ember, and report which torch APIs a script uses that ember lacks.

``ember run script.py`` (or ``python -m ember.compat script.py``) installs an
import hook so that ``import torch``, ``import torch.nn as nn`` and
``from torch.utils.data import DataLoader`` resolve to ember's modules. Every
``torch...`` module is a thin alias of its ember namesake: a name ember lacks
raises ``AttributeError: ember does not implement torch.xxx`` and a missing
module raises ``ModuleNotFoundError`` naming the torch module, never a silent
stand-in.

``import torchvision`` (and ``torchvision.datasets/transforms/models/utils/ops``) resolves the same
way, to ``ember.vision`` and its modules. An ``import ember as torch`` program does not get that:
without the hook, ``import torchvision`` finds the real torchvision (if installed), which imports
the real torch and mixes two tensor types; making it resolve to ember would mean installing the
hook as a side effect of ``import ember`` and so hijacking every other library's ``import torch``
in the process. Such a program should import ``ember.vision`` (``import ember.vision as torchvision``),
or be run with ``ember run``.
"""
import ast
import importlib
import os
import importlib.abc
import importlib.machinery
import importlib.util
import runpy
import sys
import types


class _Alias(types.ModuleType):
    """``torch.<x>`` seen through ember: attributes come from the ember module of the same path."""

    def __init__(self, torch_name, target):
        super().__init__(torch_name)
        object.__setattr__(self, '_target', target)
        # not the module's own __getattr__ (PEP 562, found in the instance dict before the class's): the class's
        # reaches it through the target and hands out submodules as their aliases
        self.__dict__.update({k: v for k, v in target.__dict__.items() if k not in ('__name__', '__spec__',
                                                                                     '__loader__', '__getattr__')
                              and not _is_ember_submodule(v)})

    def __getattr__(self, name):
        if name.startswith('__') and not _is_ember_submodule(getattr(self._target, name, None)):
            raise AttributeError(name)      # (torch.__config__ is a submodule)
        try:
            value = getattr(self._target, name)
            if _is_ember_submodule(value):      # torch.optim.lr_scheduler is named so (d2l compares the names)
                from .serialization import _torch_module
                value = self.__dict__[name] = importlib.import_module(_torch_module(value.__name__))
            return value
        except AttributeError:
            sub = f'{self.__name__}.{name}'
            try:
                return importlib.import_module(sub)
            except ImportError:
                raise AttributeError(f"ember does not implement {sub} (module '{self._target.__name__}' has no "
                                     f"attribute '{name}')") from None

    def __setattr__(self, name, value):
        if isinstance(value, _Alias) and value.__name__ == f'{self.__name__}.{name}' and \
                not _is_ember_submodule(getattr(self._target, name, value._target)):
            return      # the import system binding a submodule whose name the package gives to another object
            # (torch._higher_order_ops.map is the function, as torch's package leaves it)
        if name not in _MODULE_IDENTITY:    # the import system's own fields name the alias, not the ember module
            setattr(self._target, name, value)
        self.__dict__[name] = value

    def __dir__(self):
        # the ember module's names, submodules included (held back from __dict__ until first reached, so that they
        # are handed out as aliases): ``dir(torch.optim)`` lists ``lr_scheduler`` as torch's does
        return sorted((set(self.__dict__) | set(dir(self._target))) - {'_target'})

    def __reduce__(self):
        # pickled by name, as a module is (dill pickles closures over ``torch`` by reference: datasets' hashing)
        return importlib.import_module, (self.__name__,)


_MODULE_IDENTITY = frozenset(['__spec__', '__loader__', '__package__', '__path__', '__file__', '__cached__'])


def _is_ember_submodule(value):
    """An ember module held as an attribute: reached through an alias, it is handed out as its torch alias.
    Module objects that are not imported modules (the operator namespaces ``torch.ops.aten``, ``torch.ops.mylib``)
    are handed out as they are."""
    return isinstance(value, types.ModuleType) and not isinstance(value, _Alias) and \
        (value.__name__ == 'ember' or value.__name__.startswith('ember.')) and \
        sys.modules.get(value.__name__) is value


_PREFIXES = {'torch': 'ember', 'torchvision': 'ember.vision',     # torch name → ember package
             'functorch': None}     # the functorch package, built here over ember.func (_functorch_module)


def _split(fullname):
    """('torchvision', 'ember.vision') for 'torchvision.x'; None for names the hook leaves alone."""
    root = fullname.split('.', 1)[0]
    return (root, _PREFIXES[root]) if root in _PREFIXES else None


class _TorchFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if _split(fullname):
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        root, ember_root = _split(spec.name)
        ember_name = ember_root + spec.name[len(root):] if ember_root else None
        try:
            target = importlib.import_module(ember_name) if ember_root else _functorch_module(spec.name)
        except ModuleNotFoundError:
            raise ModuleNotFoundError(f"ember does not implement the {root} module '{spec.name}'",
                                      name=spec.name) from None
        alias = _Alias(spec.name, target)
        if spec.name in ('torch', 'torch.version'):
            # NOTE [torch version under ember run]: ``torch.__version__`` is the torch API version ember follows,
            # marked as ember's (2.13.0+ember), so version checks (``>= (2, 0)``, packaging's parse) take the
            # paths this API serves; ember.__version__ stays ember's own. _torch_shim/ holds the matching
            # distribution metadata (torch's and torchvision's, 0.28.0+ember), for libraries that ask
            # importlib.metadata.version('torch') or ('torchvision').
            from .torch_version import TorchVersion
            from .version import torch_api
            alias.__dict__['__version__'] = TorchVersion(f'{torch_api}+ember')
        if spec.name == 'torch':        # torch.torch is torch (kornia, transformers reach names through it)
            alias.__dict__['torch'] = alias
        return alias

    def exec_module(self, module):
        if module.__name__ == 'torch':      # torch.version is the alias, whose __version__ is torch's (above)
            module.__dict__['version'] = importlib.import_module('torch.version')


# --- functorch ---------------------------------------------------------------------
# NOTE [functorch alias]: torch ships the old functorch package beside itself (torch.func's predecessor). Its
# transforms are torch.func's, so the alias hands out ember.func's; what torch.func dropped is the stateful-module
# API, make_functional(model) -> (fmodel, params), written below over ember.func.functional_call.

def _functorch_module(name):
    """The ember module behind ``functorch`` (or ``functorch.experimental``); ModuleNotFoundError for others."""
    mod = _FUNCTORCH.get(name)
    if mod is None:
        if name not in ('functorch', 'functorch.experimental', 'functorch.experimental.control_flow'):
            raise ModuleNotFoundError(name)
        from . import func
        mod = types.ModuleType(f'ember.compat.{name}')
        if name == 'functorch.experimental.control_flow':      # torch.cond and torch._higher_order_ops.map
            from ._higher_order_ops import cond, map as map_
            from ._higher_order_ops.map import _stack_pytree, _unstack_pytree
            mod.cond, mod.map, mod._stack_pytree, mod._unstack_pytree = cond, map_, _stack_pytree, _unstack_pytree
            _FUNCTORCH[name] = mod
            return mod
        mod.functionalize = func.functionalize
        if name == 'functorch.experimental':
            mod.__path__ = []       # a package too: functorch.experimental.control_flow
            for n in ('jacfwd', 'jvp', 'hessian', 'replace_all_batch_norm_modules_'):
                setattr(mod, n, getattr(func, n))
        if name == 'functorch':
            mod.__path__ = []       # a package: `import functorch.experimental` asks the hook for its submodules
            for n in ('vmap', 'grad', 'grad_and_value', 'vjp', 'jvp', 'jacrev', 'jacfwd', 'hessian', 'linearize'):
                setattr(mod, n, _deprecated_functorch(n, getattr(func, n)))
            mod.FunctionalModule, mod.FunctionalModuleWithBuffers = _functional_module_classes()
            mod.make_functional = make_functional
            mod.make_functional_with_buffers = make_functional_with_buffers
            mod.combine_state_for_ensemble = combine_state_for_ensemble
        _FUNCTORCH[name] = mod
    return mod


_FUNCTORCH = {}


def _deprecated_functorch(name, fn):
    """functorch's transform ``name``, warning as torch's does at each call (a FutureWarning at the caller)."""
    import functools
    import warnings
    new = 'torch.vmap' if name == 'vmap' else f'torch.func.{name}'
    message = (f"We've integrated functorch into PyTorch. As the final step of the integration, `functorch.{name}` "
               "is deprecated as of PyTorch 2.0 and will be deleted in a future version of PyTorch >= 2.3. Please use "
               f"`{new}` instead; see the PyTorch 2.0 release notes and/or the `torch.func` migration guide for more "
               "details https://pytorch.org/docs/main/func.migrating.html")

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        warnings.warn(message, FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)
    return wrapper


def _unique_members(named):
    """``(names, values, names_map)`` as functorch's extract_weights: each tensor once (its first name), and every
    name it goes by (tied weights), so that one value replaces all of them."""
    names, values, names_map, first = [], [], {}, {}
    for n, v in named:
        if id(v) in first:
            names_map[first[id(v)]].append(n)
            continue
        first[id(v)] = n
        names.append(n)
        values.append(v)
        names_map[n] = [n]
    return tuple(names), tuple(values), names_map


def _functional_module_classes():
    if 'classes' not in _FUNCTORCH:
        from . import nn
        from .func import functional_call

        def call(module, names_map, names, values, args, kwargs):
            state = {alias: v for n, v in zip(names, values) for alias in names_map[n]}
            return functional_call(module, state, args, kwargs, tie_weights=False)

        class FunctionalModule(nn.Module):
            """What ``make_functional`` returns: ``fmodel(params, *args)`` runs the model with ``params``."""

            def __init__(self, stateless_model, param_names, names_map):
                super().__init__()
                self.stateless_model, self.param_names, self.names_map = stateless_model, param_names, names_map

            def forward(self, params, *args, **kwargs):
                return call(self.stateless_model, self.names_map, self.param_names, tuple(params), args, kwargs)

        class FunctionalModuleWithBuffers(nn.Module):
            """What ``make_functional_with_buffers`` returns: ``fmodel(params, buffers, *args)``."""

            def __init__(self, stateless_model, param_names, buffer_names, param_names_map, buffer_names_map):
                super().__init__()
                self.stateless_model, self.param_names, self.buffer_names = stateless_model, param_names, buffer_names
                self.all_names_map = dict(param_names_map)
                self.all_names_map.update(buffer_names_map)

            def forward(self, params, buffers, *args, **kwargs):
                return call(self.stateless_model, self.all_names_map, self.param_names + self.buffer_names,
                            tuple(params) + tuple(buffers), args, kwargs)

        FunctionalModule.__module__ = FunctionalModuleWithBuffers.__module__ = 'functorch'
        _FUNCTORCH['classes'] = (FunctionalModule, FunctionalModuleWithBuffers)
    return _FUNCTORCH['classes']


def _extract(model, buffers, disable_autograd_tracking):
    import copy
    model = copy.deepcopy(model)    # functorch's params belong to a copy: the model given stays untouched
    pn, params, pmap = _unique_members(model.named_parameters(remove_duplicate=False))
    if disable_autograd_tracking:
        for p in params:
            p.requires_grad_(False)
    if not buffers:
        return model, (pn, params, pmap)
    return model, (pn, params, pmap), _unique_members(model.named_buffers(remove_duplicate=False))


def make_functional(model, disable_autograd_tracking=False):
    """functorch.make_functional: ``(fmodel, params)`` with ``fmodel(params, *args)`` a pure function of params.

    >>> import ember
    >>> fmodel, params = make_functional(ember.nn.Linear(2, 1))
    >>> fmodel((ember.ones(1, 2), ember.zeros(1)), ember.tensor([[1., 2.]]))
    tensor([[3.]])
    """
    if len(list(model.buffers())) > 0:
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    FunctionalModule, _ = _functional_module_classes()
    copy_, (names, params, names_map) = _extract(model, False, disable_autograd_tracking)
    return FunctionalModule(copy_, names, names_map), params


def make_functional_with_buffers(model, disable_autograd_tracking=False):
    """functorch.make_functional_with_buffers: ``(fmodel, params, buffers)``, ``fmodel(params, buffers, *args)``."""
    _, FunctionalModuleWithBuffers = _functional_module_classes()
    copy_, (pn, params, pmap), (bn, buffers, bmap) = _extract(model, True, disable_autograd_tracking)
    return FunctionalModuleWithBuffers(copy_, pn, bn, pmap, bmap), params, buffers


def combine_state_for_ensemble(models):
    """functorch.combine_state_for_ensemble: ``(fmodel, params, buffers)``, each parameter and buffer stacked over
    the ``M`` models along a new first dimension, for ``vmap(fmodel, (0, 0, None))(params, buffers, x)``."""
    from . import stack
    if len(models) == 0:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to be of the same class.")
    funcs, params, buffers = zip(*[make_functional_with_buffers(m) for m in models])
    params = tuple(stack(shards).detach() for shards in zip(*params))
    buffers = tuple(stack(shards).detach() for shards in zip(*buffers))
    return funcs[0], params, buffers


SHIM_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), '_torch_shim')


def install(children=True):
    """Make ``import torch`` resolve to ember for the rest of this process and, with ``children``, in the
    processes it starts (NOTE [ember run in child processes] in ember/_torch_shim/torch.py)."""
    if not any(isinstance(f, _TorchFinder) for f in sys.meta_path):
        for name in [m for m in sys.modules if _split(m)]:
            del sys.modules[name]
        sys.meta_path.insert(0, _TorchFinder())
    from ._core import naming
    naming.show_as('torch')      # the program imports ember as torch: reprs name torch (NOTE in _core/naming.py)
    _name_core_classes_as_torch()
    _name_classes_as_torch()
    if children:
        _reach_children()


# the modules torch's core classes say they live in: libraries pick a backend by ``type(x).__module__`` (autoray,
# opt_einsum: 'torch'), and ``<class 'torch.Tensor'>`` is what a program prints; the classes are ember's, and pickles
# naming them resolve through the alias
_TORCH_HOMES = {'Tensor': 'torch', 'Size': 'torch', 'dtype': 'torch', 'device': 'torch', 'finfo': 'torch',
                'iinfo': 'torch', 'memory_format': 'torch', 'layout': 'torch', 'Generator': 'torch._C'}


def _name_core_classes_as_torch():
    import ember
    for name, home in _TORCH_HOMES.items():
        cls = getattr(ember, name)
        if cls.__module__.startswith('ember'):
            cls.__module__ = home
    # nn.Module too: transformers' Trainer asks a model's classes which framework they belong to (infer_framework)
    ember.nn.Module.__module__ = 'torch.nn.modules.module'
    err = ember.linalg.LinAlgError          # torch's is torch._C._LinAlgError, shown as torch.linalg.LinAlgError
    err.__module__, err.__name__, err.__qualname__ = 'torch._C', '_LinAlgError', '_LinAlgError'


# NOTE [torch's class names under ember run]: a program run with ``ember run`` sees every ember class under torch's
# module path: ``type(nn.Linear(2, 2))`` is ``<class 'torch.nn.modules.linear.Linear'>``, ``SGD.__module__`` is
# ``'torch.optim.sgd'``. Programs and libraries read these paths: custom fx tracers treat modules whose
# ``__module__`` starts with ``torch.nn`` as leaves (timm's feature extraction), layer counters and allow-lists of
# unpickling collect ``torch.nn.modules`` classes, error messages name the types. The classes stay ember's: pickle,
# ``inspect`` and ``typing`` find them through the import hook, whose ``torch.x`` alias holds ember.x's names. Every
# ember module already imported is renamed when the hook is installed, and one imported later (ember imports many
# lazily: ``ember.optim.sgd`` on first use) right after it runs, by the loader wrapper below. Classes of ember's
# private layers keep their path (they have no torch namesake), and every class keeps its ember path when ember
# runs as itself (``import ember``): the renaming happens only under the hook.

def _name_classes_as_torch():
    for name in [m for m in sys.modules if _is_ember_module(m)]:
        _name_module_classes(sys.modules[name])
    if not any(isinstance(f, _RenamingFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _RenamingFinder())


def _is_ember_module(name):
    return (name == 'ember' or name.startswith('ember.')) and not name.startswith(('ember.compat', 'ember._torch_shim'))


def _shown_as_torch(home):
    """Public modules only: ember's private layers (``ember._core``, ``ember._dispatch``, ...) have no torch
    namesake, and their classes (TensorImpl, the dispatcher's) keep saying they are ember's."""
    return _is_ember_module(home) and not any(part.startswith('_') for part in home.split('.'))


def _name_module_classes(module):
    from .serialization import _torch_module
    for value in list(vars(module).values()):
        home = getattr(value, '__module__', None) if isinstance(value, type) else None
        if isinstance(home, str) and _shown_as_torch(home):
            value.__module__ = _torch_module(home)


class _RenamingFinder(importlib.abc.MetaPathFinder):
    """Finds ember's modules as Python does, and names their classes as torch's once they have run."""

    def find_spec(self, fullname, path=None, target=None):
        if not _is_ember_module(fullname):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None and not isinstance(spec.loader, _RenamingLoader):
            spec.loader = _RenamingLoader(spec.loader)
        return spec


class _RenamingLoader(importlib.abc.Loader):
    def __init__(self, loader):
        self._loader = loader

    def __getattr__(self, name):            # get_source, get_filename, resource readers: the wrapped loader's
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _name_module_classes(module)


def imported_as():
    """``'torch'`` once ``install`` made this process import ember as torch, else ``'ember'``: the namespace in
    which printed code (fx's generated forward) names ember's functions."""
    from ._core import naming
    return naming.shown


def _reach_children():
    """Spawned children take the parent's sys.path; fresh interpreters read PYTHONPATH."""
    if SHIM_DIR not in sys.path:
        sys.path.insert(0, SHIM_DIR)
    paths = [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]
    if SHIM_DIR not in paths:
        os.environ['PYTHONPATH'] = os.pathsep.join([SHIM_DIR] + paths)


def run(script, argv=()):
    """Run ``script`` as ``__main__`` with torch resolving to ember."""
    install()
    sys.argv = [script, *argv]
    # as `python script.py` does: the script's folder comes first on sys.path, so its sibling modules import
    # (fast_neural_style/neural_style/neural_style.py imports utils, vgg and transformer_net beside it)
    import os
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    path = os.path.abspath(script)
    if not os.path.isfile(path) or path.endswith('.zip'):
        runpy.run_path(path, run_name='__main__')       # a folder or zip with a __main__.py
        return
    _run_file_as_main(path)


def _run_file_as_main(path):
    """As ``python script.py``: ``__file__`` absolute (Python 3.9+) while ``sys.argv[0]`` stays as typed
    (runpy.run_path sets both to the path it is given)."""
    import builtins
    with open(path, 'rb') as f:
        source = f.read()
    try:
        code = compile(source, path, 'exec')
    except SyntaxError as e:
        _exit_as_python(e, None)
    main = types.ModuleType('__main__')
    main.__dict__.update(__file__=path, __cached__=None, __loader__=None, __package__=None, __spec__=None,
                         __builtins__=builtins)
    old = sys.modules.get('__main__')
    sys.modules['__main__'] = main
    try:
        exec(code, main.__dict__)
    except Exception as e:          # noqa: BLE001 - reported as Python reports an uncaught exception
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code is not code:
            tb = tb.tb_next
        _exit_as_python(e, tb)
    finally:
        if old is not None:
            sys.modules['__main__'] = old


def _exit_as_python(e, tb):
    """An uncaught exception of the script, as ``python script.py`` shows it: the traceback from the script's
    own frame (not runpy's and ember's runner frames above it), through ``sys.excepthook``, then exit status 1."""
    sys.excepthook(type(e), e.with_traceback(tb), tb)
    raise SystemExit(1)


# --- compat report -------------------------------------------------------------------

def _torch_names(tree):
    """Local names bound to torch modules or objects: {'nn': 'torch.nn', 'DataLoader': 'torch.utils.data.DataLoader'}."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == 'torch' or a.name.startswith('torch.'):
                    names[a.asname or a.name.split('.')[0]] = a.name if a.asname else 'torch'
        elif isinstance(node, ast.ImportFrom) and node.module and (node.module == 'torch' or
                                                                    node.module.startswith('torch.')):
            for a in node.names:
                names[a.asname or a.name] = f'{node.module}.{a.name}'
    return names


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return list(reversed(parts))
    return None


def _resolve(path):
    """Does torch path ``torch.a.b`` exist in ember?"""
    parts = path.split('.')
    obj = importlib.import_module('ember')
    for i, p in enumerate(parts[1:], 1):
        if hasattr(obj, p):
            obj = getattr(obj, p)
            continue
        try:
            obj = importlib.import_module('ember.' + '.'.join(parts[1:i + 1]))
        except ImportError:
            return False
    return True


def report(script):
    """The torch APIs ``script`` references, split into those ember has and those it lacks."""
    with open(script, encoding='utf-8', errors='replace') as f:
        tree = ast.parse(f.read(), script)
    names = _torch_names(tree)
    used = set(v for v in names.values())
    for node in ast.walk(tree):     # every imported torch module counts, even when bound only as `torch`
        if isinstance(node, ast.Import):
            used.update(a.name for a in node.names if a.name.startswith('torch.'))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            d = _dotted(node)
            if d and d[0] in names:
                used.add('.'.join([names[d[0]]] + d[1:]))
    # keep only the longest chains that are not prefixes of attribute uses on results (x.shape stays out)
    found, missing = [], []
    for path in sorted(used):
        (found if _resolve(path) else missing).append(path)
    return found, missing


def python_files(path):
    """``path`` itself, or every ``.py`` file under the folder ``path`` (sorted; hidden folders skipped)."""
    if not os.path.isdir(path):
        return [path]
    out = []
    for base, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith('.') and d != '__pycache__')
        out.extend(os.path.join(base, f) for f in sorted(files) if f.endswith('.py'))
    return out


def report_main(path, out=sys.stdout):
    """``ember compat-report PATH``: one block per file (a folder is walked); exit status 1 if any API is missing.

    A file that does not parse is reported as such and counts as a failure.
    """
    files = python_files(path)
    bad = 0
    for f in files:
        try:
            found, missing = report(f)
        except SyntaxError as e:
            print(f'{f}: cannot parse ({e.msg}, line {e.lineno})', file=out)
            bad += 1
            continue
        print(f'{f}: {len(found)} torch APIs available in ember, {len(missing)} missing', file=out)
        for m in missing:
            print(f'  missing: {m}', file=out)
        bad += bool(missing)
    if len(files) > 1:
        print(f'{len(files)} files, {len(files) - bad} fully covered, {bad} with missing APIs or errors', file=out)
    return 1 if bad else 0


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        print("usage: python -m ember.compat script.py [args...]")
        return 2
    run(argv[0], argv[1:])
    return 0


if __name__ == '__main__':
    sys.exit(main())
