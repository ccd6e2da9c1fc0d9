"""Architecture rules that a test can check: import directions and torch independence."""
import ast
import os
import re
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EMBER = os.path.join(ROOT, 'ember')


def _imports(path):
    tree = ast.parse(open(path).read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, 0
        elif isinstance(node, ast.ImportFrom):
            yield (node.module or ''), node.level


def _py_files(d):
    for base, _, files in os.walk(d):
        for f in files:
            if f.endswith('.py'):
                yield os.path.join(base, f)


def test_ember_never_imports_torch():
    for path in _py_files(EMBER):
        for mod, level in _imports(path):
            assert not (level == 0 and (mod == 'torch' or mod.startswith('torch.'))), f'{path} imports {mod}'


def test_kernel_modules_know_arrays_only():
    """Backend kernel modules import NumPy and the standard library only: never ember (no Tensors, no autograd),
    never scipy (a test-only package: NOTE [special functions without scipy])."""
    allowed_roots = {'numpy', 'math', 'functools', 'itertools', 'operator', 'warnings', 'ml_dtypes',
                     'os', 'sys', 'threading', '_thread', 'contextvars', 'ctypes', 'time'}   # stdlib: _parallel, _blas, _process, _split
    checked = 0
    for sub in ('cpu', 'sparse', 'cuda', 'quantized'):
        for path in _py_files(os.path.join(EMBER, '_backends', sub)):
            if os.path.basename(path) == '__init__.py':
                continue      # the registration glue, which calls ember.library
            checked += 1
            for mod, level in _imports(path):
                ok = (level == 0 and mod.split('.')[0] in allowed_roots) or (level == 1 and mod.startswith('_'))
                # the sparse kernels take and return COOArrays and CompressedArrays, the sparse layouts' arrays (as
                # Meta's MetaArray); the compressed kernels reuse the COO ones
                ok = ok or (sub == 'sparse' and level == 3 and mod in ('_core.coo', '_core.compressed'))
                ok = ok or (sub == 'sparse' and level == 1 and mod == 'kernels')
                # the quantized kernels take and return QArrays (NOTE [quantized tensors]) and read the quantized dtypes
                ok = ok or (sub == 'quantized' and level == 3 and mod in ('_core.quantized', '_core.dtype'))
                ok = ok or (sub == 'cuda' and level == 0 and mod == 'cupy')      # the CUDA backend's array module
                assert ok, f'{path} imports {"." * level}{mod}'     # level 1: a helper of this backend
    assert checked > 10


# the one sanctioned reach below the public API per front end, each torch's own counterpart: nn.functional takes
# the generated functions of operators declared nn=True (torch.nn.functional imports torch._C._nn), and
# utils._python_dispatch is where torch code imports the dispatch-mode base class from
_SANCTIONED = {os.path.join('nn', 'functional', '__init__.py'): '_ops.public',
               os.path.join('utils', '_python_dispatch.py'): '_dispatch.modes'}


def test_front_end_uses_public_api_only():
    """nn, optim, utils, vision, distributions, distributed, fx, export, onnx and profiler never reach into _core, _backends, _ops
    or _dispatch, nor into a tensor's raw array (``._a``): they call the public API and ``ember.ops.aten`` (the
    profiler, the recorder in ember.autograd.profiler, as torch.profiler builds on torch.autograd.profiler)."""
    checked = 0
    for pkg in ('nn', 'optim', 'utils', 'vision', 'distributions', 'distributed', 'fx', 'export', 'onnx', 'profiler',
                'func', 'ao', 'quantization', 'nested'):
        for path in _py_files(os.path.join(EMBER, pkg)):
            rel = os.path.relpath(path, EMBER)
            checked += 1
            for mod, level in _imports(path):
                if level and _SANCTIONED.get(rel) == mod.lstrip('.'):
                    continue
                for below in ('_backends', '_core', '_ops', '_dispatch'):
                    assert below not in mod.split('.'), f'{path} imports {"." * level}{mod}'
            src = open(path).read()
            assert not re.search(r'\._a\b', src), f'{path} reads a raw array (._a)'
    assert checked > 40


def test_hand_written_public_functions_call_operators_only():
    """The public functions written in Python (_python_functions/: varargs forms, Python-value results) and ember.linalg pick an
    operator and call it through ``ember.ops.aten``: never the declaration table, the dispatcher, a backend or a
    tensor's raw array. They may use _core's dtype rules (promotion, can_cast), which torch exposes too."""
    paths = list(_py_files(os.path.join(EMBER, '_python_functions'))) + [os.path.join(EMBER, 'linalg.py')]
    for path in paths:
        for mod, level in _imports(path):
            for below in ('_ops', '_dispatch'):
                assert below not in mod.split('.'), f'{path} imports {"." * level}{mod}'
            if '_backends' in mod.split('.'):       # ember.linalg re-exports the kernels' LinAlgError, as torch does
                assert path.endswith('linalg.py') and mod.endswith('cpu.linalg'), f'{path} imports {mod}'
        src = open(path).read()
        assert not re.search(r'\._a\b|DECLS|BY_OP', src), f'{path} reaches below the operators'
    assert len(paths) > 8


def test_imports_and_trains_with_torch_blocked():
    code = textwrap.dedent('''
        import sys
        sys.modules['torch'] = None          # any "import torch" now raises ImportError
        import ember
        ember.manual_seed(0)                 # unseeded, an unlucky draw converged too slowly for the bound
        x = ember.randn(16, 3)
        w = ember.zeros(3, 1, requires_grad=True)
        y = x.sum(1, keepdim=True)
        for _ in range(50):
            loss = ((x.matmul(w) - y) ** 2).mean()
            loss.backward()
            with ember.no_grad():
                w -= 0.1 * w.grad
                w.grad = None
        assert loss.item() < 1e-2, loss.item()
        assert 'torch' not in [m for m in sys.modules if sys.modules[m] is not None]
        print('ok')
    ''')
    r = subprocess.run([sys.executable, '-c', code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and 'ok' in r.stdout, r.stderr


def test_core_layers_are_in_no_import_cycle():
    """No module of the layers under the public API (ember._*) is part of a module-level import cycle
    (`python bench/import_cycles.py` lists them); the front ends' own `import ember` is torch's habit too."""
    import importlib.util
    spec = importlib.util.spec_from_file_location('import_cycles', os.path.join(ROOT, 'bench', 'import_cycles.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    edges = mod.graph()
    assert len(edges) > 200
    inner = [m for comp in mod.cycles(edges) for m in comp if m.startswith('ember._')]
    assert not inner, f'core modules in an import cycle: {inner}'


def test_operators_call_each_other_through_aten():
    """Inside the operator layer and autograd, one operator calls another as ``aten.<name>.<overload>(...)``
    (the namespace torch.ops.aten is, and what graphs will name), never through the declaration table."""
    pattern = re.compile(r"DECLS\[[^\]]*\]\.(op|inplace_op|out_op)\b|\b_call\('")
    for sub in ('_ops', 'autograd'):
        for path in _py_files(os.path.join(EMBER, sub)):
            if os.path.basename(path) in ('public.py', 'registry.py'):
                continue        # the table itself, and the generation of the public functions from it
            for i, line in enumerate(open(path), 1):
                assert not pattern.search(line), f'{path}:{i}: {line.strip()}'
