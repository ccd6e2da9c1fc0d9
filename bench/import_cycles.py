"""List the import cycles among ember's modules (module-level imports only; imports inside functions are
the lazy ones and do not count). Prints each strongly connected component of the import graph with more
than one module, largest first.

    python bench/import_cycles.py                        # every module-level import
    python bench/import_cycles.py --no-package-imports   # without submodules' `import ember`
"""
import ast
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'ember')


def _module_name(path):
    rel = os.path.relpath(path, os.path.dirname(ROOT))[:-3].replace(os.sep, '.')
    return rel[:-len('.__init__')] if rel.endswith('.__init__') else rel


def _resolve(mod, level, name, current, is_pkg):
    if level == 0:
        return name if name and name.split('.')[0] == 'ember' else None
    parts = current.split('.')
    base = parts if is_pkg else parts[:-1]
    base = base[:len(base) - (level - 1)]
    return '.'.join(base + ([name] if name else []))


def graph():
    mods = {}
    for base, _, files in os.walk(ROOT):
        for f in files:
            if f.endswith('.py'):
                p = os.path.join(base, f)
                mods[_module_name(p)] = p
    edges = {m: set() for m in mods}
    for m, p in mods.items():
        tree = ast.parse(open(p).read())
        is_pkg = p.endswith('__init__.py')
        for node in tree.body:          # module level only
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                t = _resolve(m, node.level, node.module, m, is_pkg)
                if t is not None:       # `from . import x` depends on the submodule x, not on the package
                    targets = [f'{t}.{a.name}' if f'{t}.{a.name}' in mods else t for a in node.names]
            for t in targets:
                while t and t not in mods:
                    t = t.rpartition('.')[0]
                if t and t != m:
                    edges[m].add(t)
    return edges


def cycles(edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in edges:
        if v not in index:
            visit(v)
    return sorted(out, key=len, reverse=True)


if __name__ == '__main__':
    edges = graph()
    if '--no-package-imports' in sys.argv:     # leave out `import ember` inside submodules (torch's habit too)
        edges = {m: {t for t in e if t != 'ember'} for m, e in edges.items()}
    found = cycles(edges)
    for comp in found:
        print(f'{len(comp)} modules: ' + ', '.join(comp))
    print(f'{len(found)} cycle(s)')
