"""Compiler backends: what runs a captured graph (torch._dynamo.backends).

* ``'eager'``: the captured forward graph as an fx GraphModule, run through the dispatcher; autograd records
  it as it records any eager code. Shows that capture and guards alone are correct.
* ``'aot_eager'``: AOTAutograd (NOTE [AOTAutograd]): the joint graph, partitioned, run as one
  autograd.Function whose forward and backward graphs run through the dispatcher.
* ``'inductor'`` (the default): AOTAutograd, and each graph compiled to array code by ember._inductor.
* a callable ``backend(gm, example_inputs) -> callable``: torch's custom-backend protocol; ``gm`` is the
  captured forward GraphModule (aten operators), ``example_inputs`` its inputs as fake tensors. The callable
  it returns runs under eager autograd.
"""
import numpy as np

import ember
from ember.fx.graph_module import GraphModule

from .._core import device as _devmod
from .._core.tensor_impl import adopt
from .._functorch.aot_autograd import build_runtime, GradOf

__all__ = ['lookup_backend', 'list_backends', 'register_backend']

_TENSORS = (ember.Tensor, ember.nn.Parameter)


def _graph_module(graph, attrs):
    root = ember.nn.Module()
    for name, t in attrs.items():
        if isinstance(t, GradOf):
            root.register_buffer(name, t.get())       # refreshed before each call (_fx_runner)
        elif isinstance(t, (ember.nn.Parameter, ember.nn.Module)):     # a Module: a cond branch's subgraph
            setattr(root, name, t)
        else:
            root.register_buffer(name, t)
    return GraphModule(root, graph)


def _fx_runner(graph, attrs, name, kind):
    gm = _graph_module(graph, attrs)
    grads = [(n, t) for n, t in attrs.items() if isinstance(t, GradOf)]

    def run(tensors):
        for n, t in grads:
            gm._buffers[n] = t.get()
        if kind == 'inference':
            return list(gm(*tensors))
        with ember.no_grad():
            return list(gm(*tensors))
    run.code = gm.code
    return run


def _mutated_inputs(graph):
    """Placeholder positions and get_attr targets that in-place operators in the graph write to (through
    views too), whose version counters must move after a call as eager ember's would."""
    roots, phs, written = {}, [], set()
    for n in graph.nodes:
        if n.op == 'placeholder':
            roots[n] = n
            phs.append(n)
        elif n.op == 'get_attr':
            roots[n] = n
        elif n.op == 'call_function':
            t = n.target
            decl = getattr(t, 'decl', None)
            first = n.args[0] if n.args else None
            if decl is not None and first is not None and hasattr(first, 'op') and (
                    decl.kind == 'view' and t is decl.op or t is decl.inplace_op):
                roots[n] = roots.get(first)
                if t is decl.inplace_op and roots[n] is not None:
                    written.add(roots[n])
    return [i for i, p in enumerate(phs) if p in written], [n.target for n in written if n.op == 'get_attr']


def _inductor_runner(graph, attrs, name, kind):
    from .. import _inductor
    mutated, mutated_attrs = _mutated_inputs(graph)
    compiled = _inductor.compile_graph(graph, attrs, name, take_list=True)
    cpu = _devmod.canonical('cpu')
    bump = [attrs[a] for a in mutated_attrs]
    ndarray = np.ndarray
    fn = compiled.fn

    def run(tensors):
        arrays = [t._a if t.__class__ in _TENSORS else t for t in tensors]   # ints: saved sizes
        if mutated:
            for i in mutated:
                tensors[i]._vc[0] += 1
        if kind == 'backward' and isinstance(tensors, list):
            tensors.clear()           # the graph frees each saved activation after its last use
        res = fn(arrays)
        for t in bump:
            (t.get() if t.__class__ is GradOf else t)._vc[0] += 1
        return [adopt(r, cpu) if r.__class__ is ndarray else r for r in res]
    run.code = compiled.source
    run.compiled = compiled
    return run


class _AotBackend:
    def __init__(self, name, runner):
        self.name, self.runner = name, runner

    wants_joint = True

    def build(self, traced, example_inputs):
        if any(t.device.type != 'cpu' for t in example_inputs if isinstance(t, ember.Tensor)) \
                and self.runner is _inductor_runner:
            return build_runtime(traced, _fx_runner)      # generated array code is for the CPU backend
        return build_runtime(traced, self.runner)


class _EagerBackend:
    name = 'eager'
    wants_joint = False

    def build(self, traced, example_inputs):
        return build_runtime(traced, _fx_runner)


class _CallableBackend:
    wants_joint = False

    def __init__(self, fn):
        self.fn = fn
        self.name = getattr(fn, '__name__', repr(fn))

    def build(self, traced, example_inputs):
        gm = _graph_module(traced.graph, traced.attrs)
        fakes = [n.meta.get('val') for n in traced.graph.nodes if n.op == 'placeholder']
        compiled = self.fn(gm, fakes)

        class _Runtime:
            forward_graph = traced.graph
            backward_graph = None

            def __init__(self):
                self.traced = traced

            def __call__(self, tensors):
                out = compiled(*tensors)
                return list(out) if isinstance(out, (list, tuple)) else [out]
        return _Runtime()


_BACKENDS = {'eager': _EagerBackend(), 'aot_eager': _AotBackend('aot_eager', _fx_runner),
             'inductor': _AotBackend('inductor', _inductor_runner)}


_TAGS = {'eager': ('debug',), 'aot_eager': ('debug',)}      # torch tags its debugging backends so


def register_backend(compiler_fn=None, name=None, tags=()):
    """Register a callable backend under a name (torch._dynamo.register_backend); usable as a decorator."""
    if compiler_fn is None:
        return lambda f: register_backend(f, name, tags)
    name = name or compiler_fn.__name__
    _BACKENDS[name] = _CallableBackend(compiler_fn)
    _TAGS[name] = tuple(tags)
    return compiler_fn


def list_backends(exclude_tags=('debug', 'experimental')):
    """The backend names ``ember.compile(backend=...)`` accepts, sorted, without those tagged with one of
    ``exclude_tags`` (torch's default leaves out the debugging backends 'eager' and 'aot_eager').

    >>> import ember
    >>> ember._dynamo.list_backends(exclude_tags=())
    ['aot_eager', 'eager', 'inductor']
    """
    excluded = set(exclude_tags or ())
    return sorted(n for n in _BACKENDS if not excluded.intersection(_TAGS.get(n, ())))


def lookup_backend(backend):
    if hasattr(backend, 'build'):         # already looked up
        return backend
    if callable(backend) and not isinstance(backend, str):
        return _CallableBackend(backend)
    if backend not in _BACKENDS:
        raise ValueError(f"Invalid backend: {backend!r}; ember.compile knows {', '.join(sorted(_BACKENDS))} "
                         "(ember._dynamo.list_backends())")
    return _BACKENDS[backend]
