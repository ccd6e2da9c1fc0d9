"""make_fx: capture a function as a graph of ``ember.ops.aten`` operators (torch.fx.experimental.proxy_tensor).

NOTE [make_fx]: ``symbolic_trace`` records public functions above the dispatcher with Proxies; ``make_fx``
records what reaches the dispatcher. It runs the function on real tensors (or fake ones, ``tracing_mode=
'fake'``) under a Python dispatch mode, ``ProxyTorchDispatchMode``; every operator call reaches the mode's
``__ember_dispatch__`` as an OpOverload (``aten.addmm.default``), which runs it one level down and records a
``call_function`` Node whose arguments are the Nodes that made the tensor arguments. Tensors are matched to
Nodes by identity, so nothing about the tensors themselves changes:

* the function's arguments are placeholders (``x_1``, or ``arg0_1`` for ``*args`` and modules, as torch
  names them); a tensor that no Node made (a module's parameter, a constant) becomes a ``get_attr`` of
  ``_param_constant<i>`` / ``_tensor_constant<i>`` held by the GraphModule;
* an operator with several outputs gets a ``getitem`` Node per tensor output; an in-place operator's Node
  becomes the tensor's Node from then on, so later uses read the mutated value;
* composite operators (CompositeImplicitAutograd: ``conv2d``, ``layer_norm``...) decompose before the mode
  sees them, as in torch; ember's own fused primitives that torch defines as composites (``linear``,
  ``matmul``) are decomposed by ``ember._decomp``'s table of torch's definitions unless ``pre_dispatch=True``
  (torch's pre-dispatch / export level keeps them); ``decomposition_table`` entries run instead of the
  operator, their own calls recorded in turn.

ember's mode key sits above Autograd, so the autograd kernels run below the mode and record their backward
graph as usual; when the traced function calls ``ember.autograd.grad`` (or ``backward``), the engine's
formulas are operator calls too and are recorded: the joint forward and backward graph of a training step.

>>> import ember
>>> from ember.fx.experimental.proxy_tensor import make_fx
>>> def f(x, w):
...     return (x @ w).relu().sum()
>>> gm = make_fx(f)(ember.randn(3, 4), ember.randn(4, 5))
>>> [str(n.target) for n in gm.graph.nodes if n.op == 'call_function']
['aten.mm.default', 'aten.relu.default', 'aten.sum.dim_IntList']
"""
import contextlib
import inspect
import operator
import os
import traceback

import ember
from ember.utils import _pytree as pytree
from ember.utils._python_dispatch import TorchDispatchMode, TensorDataMap, _get_current_dispatch_mode_stack, \
    _disable_current_modes
from ember.amp.autocast_mode import _cast_for_mode, _autocast_excluded

from ..graph import Graph
from ..graph_module import GraphModule
from ..node import Op
from ..passes.shape_prop import TensorMetadata
from .symbolic_shapes import GuardOnDataDependentSymNode, ShapeEnv, SymInt, sym_size_int

__all__ = ['make_fx', 'get_isolated_graphmodule', 'dispatch_trace', 'PythonKeyTracer', 'get_proxy_mode']

_EMBER_PKG = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
# ember's own machinery, left out of recorded stack traces; ember.nn's modules stay, as torch keeps the
# torch/nn/modules frames (its functional wrappers are C functions, ember's are Python: hidden)
_HIDDEN = tuple(_EMBER_PKG + p for p in ('fx', 'export', 'onnx', '_', 'autograd', 'utils', 'ops.py',
                                         os.path.join('nn', 'functional')))


class ProxyTorchDispatchMode(TorchDispatchMode):
    """The dispatch mode make_fx runs under: hands every operator call to its tracer."""

    sees_composites = True      # its tracer applies the decomposition table it was given

    def __init__(self, tracer):
        self.tracer = tracer

    def __ember_dispatch__(self, func, types, args=(), kwargs=None):
        return self.tracer.dispatch(func, args, kwargs or {})


def get_proxy_mode():
    """The make_fx recording mode active on this thread (the innermost), or None when nothing is being traced."""
    return next((m for m in reversed(_get_current_dispatch_mode_stack()) if isinstance(m, ProxyTorchDispatchMode)),
                None)


class PythonKeyTracer:
    """Builds one Graph: which Node made each live tensor, the constants read, and the recording itself
    (torch's PythonKeyTracer and proxy_call in one). ``trace(f, args)`` runs ``f`` under the tracer's modes."""

    def __init__(self, decomposition_table, fake_mode=None, record_stack_traces=False):
        self.graph = Graph()
        self.decomp = decomposition_table
        self.fake_mode = fake_mode
        self.record_stack_traces = record_stack_traces
        self.stack_trace = None     # set while re-tracing a graph node by node (ExportedProgram.run_decompositions)
        self.mode = ProxyTorchDispatchMode(self)
        self._nodes = TensorDataMap()     # tensor -> the Node that made it (saved handles included)
        self.attrs = {}         # get_attr target -> tensor
        self._counts = {'_param_constant': 0, '_tensor_constant': 0}

    # --- tensors and their Nodes ------------------------------------------------------------
    def node_of(self, t):
        node = self._nodes.get(t)
        if node is not None:
            return node
        prefix = '_param_constant' if isinstance(t, ember.nn.Parameter) else '_tensor_constant'
        name = f'{prefix}{self._counts[prefix]}'
        self._counts[prefix] += 1
        node = self.graph.create_node(Op.GET_ATTR, name)
        self.attrs[name] = t         # held by the GraphModule, so its entry in _nodes stays valid
        self._nodes[t] = node
        self._set_meta(node, t if self.fake_mode is None else self.fake_mode.from_tensor(t))
        return node

    def bind(self, t, node):
        self._nodes[t] = node
        self._set_meta(node, t)

    def _set_meta(self, node, t):
        if self.fake_mode is not None:
            node.meta['val'] = t
        node.meta['tensor_meta'] = TensorMetadata(t.shape, t.dtype, t.requires_grad, t.stride(), None, False, {})

    def arg(self, a):
        """An argument value as a Node may hold it: tensors become their Nodes, symbolic sizes the Nodes that
        compute them (NOTE [symbolic sizes])."""
        if isinstance(a, ember.Tensor):
            return self.node_of(a)
        if isinstance(a, SymInt):
            return self.sym_node(a)
        if isinstance(a, list):       # also fx's immutable_list, when replaying a graph
            return [self.arg(e) for e in a]
        if type(a) is tuple or isinstance(a, tuple) and not hasattr(a, '_fields'):
            return tuple(self.arg(e) for e in a)
        if self.fake_mode is not None and isinstance(a, ember.device) and a.type == 'meta':
            return self.fake_mode.fake_device or ember.device('cpu')      # the device the fakes stand for
        return a

    def sym_node(self, s):
        """The Node computing a symbolic size: ``sym_size(x, d)`` for a symbol, arithmetic on those for an
        expression (one Node per distinct expression)."""
        memo = self.__dict__.setdefault('_sym_nodes', {})
        node = memo.get(s.expr)
        if node is None:
            how = s.how
            if how[0] == 'size':
                node = self.graph.create_node(Op.CALL_FUNCTION, sym_size_int, (self.node_of(how[1]), how[2]))
            else:
                node = self.graph.create_node(Op.CALL_FUNCTION, how[0], tuple(self.arg(o) for o in how[1:]))
            node.meta['val'] = s
            memo[s.expr] = node
        return node

    # --- recording --------------------------------------------------------------------------
    def dispatch(self, func, args, kwargs):
        d = self.decomp.get(func)
        if d is not None:
            with self.mode:
                r = d(*args, **kwargs)
            if r is not NotImplemented:
                return r
        autocast_off = None
        if ember.is_autocast_enabled('cpu') and not kwargs:
            # the mode sees calls before autocast does: record the casts autocast would make, then the
            # operator on the cast arguments, run without autocast (torch's make_fx records them the same way)
            with self.mode:
                cast = _cast_for_mode(func, args)
            if cast is not None:
                args = tuple(cast)
                autocast_off = _autocast_excluded()
        nargs = tuple(self.arg(a) for a in args)
        nkwargs = {k: self.arg(v) for k, v in kwargs.items()}
        if autocast_off is not None:
            with autocast_off:
                out = func(*args, **kwargs)
        else:
            out = func(*args, **kwargs)
        node = self.graph.create_node(Op.CALL_FUNCTION, func, nargs, nkwargs)
        if self.stack_trace is not None:            # re-tracing a graph: the source node's stack trace
            node.stack_trace = self.stack_trace
        elif self.record_stack_traces:
            node.stack_trace = _user_stack()
        if isinstance(out, ember.Tensor):
            self.bind(out, node)
        elif isinstance(out, (tuple, list)):
            if self.fake_mode is not None:
                node.meta['val'] = out
            for i, o in enumerate(out):
                if isinstance(o, ember.Tensor):
                    item = self.graph.create_node(Op.CALL_FUNCTION, operator.getitem, (node, i))
                    if node.stack_trace:
                        item.stack_trace = node.stack_trace
                    self.bind(o, item)
        return out

    # --- higher-order operators (NOTE [control-flow operators]) ----------------------------------
    def record_cond(self, op, pred, true_fn, false_fn, operands):
        """``cond(pred, true_fn, false_fn, operands)`` with a tensor predicate: each branch traced on the operands
        into a subgraph (``true_graph_0``, ``false_graph_0``, submodules of the result), and one node
        ``higher_order.cond(pred, true_graph_0, false_graph_0, (operands...))`` whose items are the outputs, as
        torch's make_fx records it. The value is the branch the predicate picks, or on fake tensors the true
        branch's (both have the same shapes and dtypes, or this raises)."""
        flat, spec = pytree.tree_flatten(tuple(operands))
        index = sum(1 for n in self.attrs if n.startswith('true_graph_'))
        traced = []
        for fn, which in ((true_fn, 'true'), (false_fn, 'false')):
            sub = PythonKeyTracer(self.decomp, self.fake_mode, self.record_stack_traces)
            result = []

            def branch(*leaves, fn=fn, result=result):
                values, out_spec = pytree.tree_flatten(fn(*pytree.tree_unflatten(list(leaves), spec)))
                result[:] = [values, out_spec]
                return tuple(values)
            with _disable_current_modes():
                sub.trace(branch, flat, placeholder_names=[f'arg{i}_1' for i in range(len(flat))])
            outs = [n for n in sub.graph.nodes if n.op == Op.OUTPUT][0].args[0]
            if any(getattr(n, 'op', None) == Op.PLACEHOLDER for n in outs):
                raise RuntimeError(f"torch.cond's {which}_fn returns one of its operands: higher order operators do "
                                   f"not support aliasing; return input.clone() instead")
            self.attrs[f'{which}_graph_{index}'] = sub.graph_module()
            traced.append(tuple(result))
        (t_vals, t_spec), (f_vals, f_spec) = traced
        _check_branches(t_vals, f_vals, t_spec, f_spec)
        nodes = [self.graph.create_node(Op.GET_ATTR, f'{which}_graph_{index}') for which in ('true', 'false')]
        node = self.graph.create_node(Op.CALL_FUNCTION, op, (self.arg(pred), *nodes, tuple(self.arg(a) for a in flat)))
        values = t_vals if self.fake_mode is not None or bool(pred) else f_vals
        if self.fake_mode is not None:
            node.meta['val'] = tuple(values)
        for i, v in enumerate(values):
            self.bind(v, self.graph.create_node(Op.CALL_FUNCTION, operator.getitem, (node, i)))
        return pytree.tree_unflatten(list(values), t_spec)

    def placeholder(self, name, value):
        node = self.graph.placeholder(name)
        if isinstance(value, ember.Tensor):
            if self.fake_mode is not None:
                value = self.fake_mode.from_tensor(value)
            self.bind(value, node)
        elif self.fake_mode is not None:
            node.meta['val'] = value          # a Python value the graph was specialised to
        return value

    def output(self, out):
        def as_arg(x):
            return self.node_of(x) if isinstance(x, ember.Tensor) else x
        self.graph.output(pytree.tree_map(as_arg, out))

    def modes(self):
        """The modes to trace under, the innermost last: the fake mode (if any) below the recording one."""
        stack = contextlib.ExitStack()
        if self.fake_mode is not None:
            stack.enter_context(self.fake_mode)
        stack.enter_context(self.mode)
        return stack

    def trace(self, f, args, placeholder_names=None):
        """Record ``f(*args)``. ``placeholder_names``: one name per argument, each argument then a single value
        (export's flat inputs); by default each argument's leaves are placeholders named after ``f``'s
        parameters, as torch names them."""
        if placeholder_names is not None:
            inputs = [self.placeholder(name, a) for name, a in zip(placeholder_names, args)]
        else:
            inputs = []
            for name, a in zip(_arg_names(f, len(args)), args):
                leaves, spec = pytree.tree_flatten(a)
                inputs.append(pytree.tree_unflatten([self.placeholder(f'{name}_{i + 1}', x) for i, x in enumerate(leaves)],
                                                    spec))      # a list argument's leaves: pl_1, pl_2, as torch
        with self.modes():
            try:
                out = f(*inputs)
            except Exception as e:
                if self.fake_mode is not None and _is_fake_data_access(e):
                    raise data_dependent_error(e) from e
                raise
        self.output(out)
        return self.graph

    def graph_module(self, class_name='GraphModule'):
        root = ember.nn.Module()
        for name, t in self.attrs.items():
            if isinstance(t, ember.nn.Module):          # a branch's subgraph (record_cond)
                root.add_module(name, t)
            elif isinstance(t, ember.nn.Parameter):
                setattr(root, name, t)
            else:
                root.register_buffer(name, t)
        return GraphModule(root, self.graph, class_name=class_name)


def _check_branches(t_vals, f_vals, t_spec, f_spec):
    if t_spec != f_spec or len(t_vals) != len(f_vals):
        raise RuntimeError(f"Expected true_fn and false_fn to return the same structure of tensors, but got "
                           f"{t_spec} and {f_spec}")
    for a, b in zip(t_vals, f_vals):
        if not isinstance(a, ember.Tensor) or not isinstance(b, ember.Tensor):
            raise RuntimeError(f"Expected the branches of torch.cond to return tensors, but got {type(a).__name__} "
                               f"and {type(b).__name__}")
        for what, x, y in (('dim', a.dim(), b.dim()), ('shape', tuple(a.shape), tuple(b.shape)),
                           ('dtype', a.dtype, b.dtype)):
            if x != y:
                raise RuntimeError(f"When merging two branches' output in torch.cond,  expected same {what} but "
                                   f"got {x} and {y}.")


def _user_stack():
    frames = [f for f in traceback.extract_stack()[:-2]
              if not f.filename.startswith(_HIDDEN) and not f.filename.startswith('<ember op')]
    return ''.join(traceback.format_list(frames)).strip()


def _arg_names(f, n):
    """Placeholder name stems: the parameter names of a plain function, else ``arg<i>`` (torch's choice)."""
    fn = inspect.unwrap(f) if inspect.isfunction(f) else None
    code = getattr(fn, '__code__', None)
    if code is not None and not code.co_flags & inspect.CO_VARARGS and code.co_argcount >= n:
        return list(code.co_varnames[:n])
    return [f'arg{i}' for i in range(n)]


def _user_frame(tb):
    """The innermost frame of the traceback outside ember's machinery (ember.nn counts as user code)."""
    found = None
    for frame in traceback.extract_tb(tb):
        if not frame.filename.startswith(_HIDDEN) and not frame.filename.startswith('<ember op'):
            found = frame
    return found


def data_dependent_error(e):
    """The error for Python control flow (``if``/``item``/``bool``) on a fake tensor's value."""
    frame = _user_frame(e.__traceback__)
    where = (f'\n\nThe following call raised this error:\n  File "{frame.filename}", line {frame.lineno}, in '
             f'{frame.name}\n    {frame.line}' if frame is not None else '')
    return GuardOnDataDependentSymNode(
        'Could not guard on data-dependent expression: Python needs the value of a tensor here (bool(), '
        'item(), int(), a comparison used by `if`), but tracing runs on fake tensors that have shapes and no '
        'data, so the graph cannot record which branch to take.' + where + '\n\nWrite the choice as a tensor '
        'operation (ember.where(cond, a, b) computes both branches), or move it out of the traced code.')


def _is_fake_data_access(e):
    msg = str(e)
    return isinstance(e, (NotImplementedError, TypeError, RuntimeError)) and 'meta' in msg and (
        'no data' in msg or 'numpy' in msg or 'Cannot copy out' in msg)


def dispatch_trace(f, args, decomposition_table, fake_mode=None, record_stack_traces=False,
                   placeholder_names=None):
    """Trace ``f(*args)``: returns the tracer with its graph finished (the machinery under make_fx and export)."""
    tracer = PythonKeyTracer(decomposition_table, fake_mode, record_stack_traces)
    tracer.trace(f, args, placeholder_names)
    return tracer


def _default_decompositions(pre_dispatch):
    if pre_dispatch:
        return {}
    from ember._decomp import torch_composite_decompositions
    return torch_composite_decompositions()


def make_fx(f, decomposition_table=None, tracing_mode='real', _allow_non_fake_inputs=False, *,
            pre_dispatch=False, record_module_stack=False, _allow_fake_constant=False,
            _error_on_data_dependent_ops=True, record_stack_traces=False):
    """A function that traces ``f`` on the arguments it is given and returns the GraphModule of aten operators.

    ``tracing_mode``: ``'real'`` runs ``f`` on the arguments; ``'fake'`` runs it on fake (meta) twins of them
    and of every tensor it reads, so no data is touched (``ember._subclasses.fake_tensor``); ``'symbolic'`` is
    ``'fake'`` with every size of the arguments a symbol (NOTE [symbolic sizes]) except sizes 0 and 1, equal
    sizes sharing one symbol (torch's duck sizing): the graph reads sizes with ``sym_size_int`` nodes and
    computes derived sizes with ``operator`` nodes, so it runs at other sizes too. The comparisons the
    function made on sizes are the GraphModule's ``shape_env.guards``: the sizes it is valid for. See NOTE
    [make_fx] for what the graph records.

    >>> gm = make_fx(lambda x: x.view(x.shape[0] * x.shape[1]), tracing_mode='symbolic')(ember.randn(4, 3))
    >>> print(gm.code.strip())
    def forward(self, x_1):
        sym_size_int = ember.fx.experimental.symbolic_shapes.sym_size_int(x_1, 0)
        sym_size_int_1 = ember.fx.experimental.symbolic_shapes.sym_size_int(x_1, 1)
        mul = sym_size_int * sym_size_int_1;  sym_size_int = sym_size_int_1 = None
        view = ember.ops.aten.view.default(x_1, (mul,));  x_1 = mul = None
        return view
    >>> gm(ember.randn(5, 2)).shape
    ember.Size([10])
    """
    if tracing_mode not in ('real', 'fake', 'symbolic'):
        raise AssertionError(f"Unexpected tracing type: {tracing_mode}")
    table = dict(_default_decompositions(pre_dispatch))
    table.update(decomposition_table or {})

    def wrapped(*args):
        fake_mode = shape_env = None
        if tracing_mode != 'real':
            from ember._subclasses.fake_tensor import FakeTensorMode
            shape_env = ShapeEnv() if tracing_mode == 'symbolic' else None
            fake_mode = FakeTensorMode(shape_env=shape_env)
            if shape_env is not None:
                for a in pytree.tree_leaves(list(args)):
                    if isinstance(a, ember.Tensor):
                        fake_mode.from_tensor(a, 'duck')
        tracer = dispatch_trace(f, args, table, fake_mode, record_stack_traces)
        gm = tracer.graph_module()
        if shape_env is not None:
            gm.shape_env = shape_env
        return gm
    return wrapped


def get_isolated_graphmodule(func, args, kwargs, tracing_mode='real', decomposition_table=None):
    """make_fx of ``func(*args, **kwargs)`` (torch's helper of the same name)."""
    return make_fx(lambda a, k: func(*a, **k), decomposition_table, tracing_mode)(args, kwargs)
