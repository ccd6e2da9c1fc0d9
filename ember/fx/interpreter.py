"""Interpreter and Transformer: run a GraphModule node by node (torch.fx.Interpreter).

``run_node`` dispatches on the node's opcode to a method of the same name (``placeholder``, ``get_attr``,
``call_function``, ``call_method``, ``call_module``, ``output``); override one to change what that kind of
node does. Transformer runs the same loop on Proxies, so its result is a new GraphModule.
"""
import contextlib
import inspect

from .graph import Graph
from .graph_module import GraphModule
from .node import Op, map_arg, map_aggregate
from .proxy import Proxy
from ._symbolic_trace import Tracer, _IdentityDict

__all__ = ['Interpreter', 'Transformer']


class Interpreter:
    """Runs ``module``'s graph (or ``graph``) one Node at a time.

    >>> import ember, ember.fx as fx
    >>> class NegSigmSwap(fx.Interpreter):
    ...     def call_function(self, target, args, kwargs):
    ...         if target is ember.sigmoid:
    ...             return ember.neg(*args, **kwargs)
    ...         return super().call_function(target, args, kwargs)
    >>> gm = fx.symbolic_trace(lambda x: ember.sigmoid(x))
    >>> NegSigmSwap(gm).run(ember.tensor([1.0]))
    tensor([-1.])
    """

    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env = {}
        self.name = 'Interpreter'
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        if garbage_collect_values:
            # the node after whose run each value is dead, so that env does not keep every tensor alive
            last_use, self.user_to_last_uses = {}, {}
            for node in reversed(self.graph.nodes):
                for n in node._input_nodes:
                    if n not in last_use:
                        last_use[n] = node
                        self.user_to_last_uses.setdefault(node, []).append(n)

    def run(self, *args, initial_env=None, enable_io_processing=True):
        """Run the graph on ``args``; ``initial_env`` maps Nodes to values that are not computed again."""
        self.env = initial_env if initial_env is not None else {}
        if enable_io_processing:
            args = self.graph.process_inputs(*args)
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback:       # as torch: the failing node joins the message
                    msg = f'While executing {node.format_node()}'
                    msg = f'{e.args[0]}\n\n{msg}' if e.args else msg
                    if node.stack_trace:
                        msg += f'\nOriginal traceback:\n{node.stack_trace}'
                    e.args = (msg,) + e.args[1:]
                    if isinstance(e, KeyError):
                        raise RuntimeError(*e.args) from e
                raise
            if self.garbage_collect_values:
                for dead in self.user_to_last_uses.get(node, []):
                    del self.env[dead]
            if node.op == Op.OUTPUT:
                out = self.env[node]
                return self.graph.process_outputs(out) if enable_io_processing else out
        return None

    def boxed_run(self, args_list):
        """``run`` taking its arguments in a list, which it empties (so the caller keeps no references)."""
        args_iter = iter(args_list)
        env = {}
        for n in self.graph.nodes:
            if n.op == Op.PLACEHOLDER:
                env[n] = next(args_iter)
        args_list.clear()
        return self.run(initial_env=env)

    @contextlib.contextmanager
    def _set_current_node(self, node):
        yield

    def run_node(self, n):
        """Run one Node: fetch its arguments from the environment and call the method named after its op."""
        with self._set_current_node(n):
            args, kwargs = self.fetch_args_kwargs_from_env(n)
            return getattr(self, n.op)(n.target, args, kwargs)

    # --- one method per opcode --------------------------------------------------------------------
    def placeholder(self, target, args, kwargs):
        """The next input (all remaining ones for ``*args``; the default when inputs ran out)."""
        if target.startswith('*'):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration:
            if len(args) > 0:
                return args[0]
            raise RuntimeError(f'Expected positional argument for parameter {target}, but one was not '
                               f'passed in!') from None

    def get_attr(self, target, args, kwargs):
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target, args, kwargs):
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]

    # --- helpers ----------------------------------------------------------------------------------
    def fetch_attr(self, target):
        """The attribute at dotted path ``target`` of the module."""
        obj = self.module
        for i, atom in enumerate(target.split('.')):
            if not hasattr(obj, atom):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(target.split('.')[:i + 1])}")
            obj = getattr(obj, atom)
        return obj

    def fetch_args_kwargs_from_env(self, n):
        """``n``'s args and kwargs with every Node replaced by its value."""
        args = self.map_nodes_to_values(n.args, n)
        kwargs = self.map_nodes_to_values(n.kwargs, n)
        return args, kwargs

    def map_nodes_to_values(self, args, n):
        """``args`` with every Node replaced by its value in the environment."""
        def load(a):
            if a not in self.env:
                raise RuntimeError(f'Node {n} referenced nonexistent value {a}! Run Graph.lint() to diagnose '
                                   f'such issues')
            return self.env[a]
        return map_arg(args, load)


class _TransformerTracer(Tracer):
    def __init__(self, graph):
        super().__init__()
        self.graph = graph
        self.tensor_attrs = _IdentityDict()

    def is_leaf_module(self, _, __):
        return True


class Transformer(Interpreter):
    """An Interpreter over Proxies: ``transform()`` returns a new GraphModule with what the overridden
    methods produced.

    >>> import ember, ember.fx as fx
    >>> class ReluToGelu(fx.Transformer):
    ...     def call_function(self, target, args, kwargs):
    ...         if target is ember.relu:
    ...             target = ember.nn.functional.gelu
    ...         return super().call_function(target, args, kwargs)
    >>> gm = ReluToGelu(fx.symbolic_trace(lambda x: ember.relu(x))).transform()
    >>> [n.target for n in gm.graph.nodes][1] is ember.nn.functional.gelu
    True
    """

    def __init__(self, module):
        super().__init__(module)
        self.new_graph = Graph()
        self.new_graph._codegen = module.graph._codegen
        self.tracer = _TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target, args, kwargs):
        default = next(iter(args)) if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target, args, kwargs):
        return self.tracer.create_proxy(Op.GET_ATTR, target, args, kwargs)

    def call_module(self, target, args, kwargs):
        sub = self.fetch_attr(target)
        return self.tracer.call_module(sub, sub.forward, args, kwargs)

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy(Op.CALL_FUNCTION, target, args, kwargs)

    def transform(self):
        """Run the graph on Proxies and return the GraphModule recorded."""
        result = super().run(enable_io_processing=False)
        if result is not None:
            old_output = next(n for n in reversed(self.graph.nodes) if n.op == Op.OUTPUT)
            new_output = self.new_graph.output(map_aggregate(result, lambda a: a.node if isinstance(a, Proxy)
                                                             else a), type_expr=old_output.type)
            new_output.meta = dict(old_output.meta)
        return GraphModule(self.module, self.new_graph)
