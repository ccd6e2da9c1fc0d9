"""FxGraphDrawer: a GraphModule as a Graphviz graph, one record-shaped box per node
(torch.fx.passes.graph_drawer). It needs the ``pydot`` package, as torch's does: the DOT text is written
here and handed to pydot, whose graph objects ``get_dot_graph()`` returns (``.to_string()``,
``.write_svg(path)``)."""
import ember

from ..node import Op

__all__ = ['FxGraphDrawer']

_COLORS = {Op.PLACEHOLDER: '"AliceBlue"', Op.CALL_MODULE: 'LemonChiffon1', Op.GET_ATTR: 'Gainsboro',
           Op.OUTPUT: '"AliceBlue"', Op.CALL_FUNCTION: '"#CAFFE3"', Op.CALL_METHOD: '"#FFE0B3"'}


class PydotMissingError(RuntimeError, ImportError):
    """FxGraphDrawer without pydot: a RuntimeError as torch raises, and an ImportError."""


def _pydot():
    try:
        import pydot
    except ImportError:
        raise PydotMissingError('FXGraphDrawer requires the pydot package to be installed. Please install pydot '
                                'through your favorite Python package manager.') from None
    return pydot


def _escape(s):
    for c in '\\{}<>|"':
        s = s.replace(c, '\\' + c)
    return s.replace('\n', '\\n')


class FxGraphDrawer:
    """Draws ``graph_module`` (and its GraphModule submodules) as DOT graphs named ``name``.

    >>> import ember, ember.fx as fx                                    # doctest: +SKIP
    >>> from ember.fx.passes.graph_drawer import FxGraphDrawer          # doctest: +SKIP
    >>> d = FxGraphDrawer(fx.symbolic_trace(ember.nn.ReLU()), 'relu')   # doctest: +SKIP
    >>> print(d.get_dot_graph().to_string())                            # doctest: +SKIP
    """

    def __init__(self, graph_module, name, ignore_getattr=False, ignore_parameters_and_buffers=False,
                 skip_node_names_in_args=True, parse_stack_trace=False, dot_graph_shape=None,
                 normalize_args=False):
        self._pydot = _pydot()
        self._name = name
        self.dot_graph_shape = dot_graph_shape if dot_graph_shape is not None else 'record'
        self._ignore_getattr = ignore_getattr
        self._ignore_params = ignore_parameters_and_buffers
        self._skip_names = skip_node_names_in_args
        self._dot_graphs = {name: self._to_dot(graph_module, name)}
        for node in graph_module.graph.nodes:
            if node.op != Op.CALL_MODULE:
                continue
            sub = graph_module.get_submodule(node.target)
            if hasattr(sub, 'graph'):
                self._dot_graphs[f'{name}_{node.target}'] = self._to_dot(sub, f'{name}_{node.target}')

    def get_dot_graph(self, submod_name=None):
        """The pydot graph of the module (or of its GraphModule submodule ``submod_name``)."""
        return self.get_main_dot_graph() if submod_name is None else self.get_submod_dot_graph(submod_name)

    def get_main_dot_graph(self):
        return self._dot_graphs[self._name]

    def get_submod_dot_graph(self, submod_name):
        return self._dot_graphs[f'{self._name}_{submod_name}']

    def get_all_dot_graphs(self):
        return self._dot_graphs

    def _args_str(self, args):
        def one(a):
            if self._skip_names and isinstance(a, ember.fx.Node):
                return f'%{a.name}'
            return str(a)
        if isinstance(args, dict):
            return '\\l'.join(f'{k} = {_escape(one(v))}' for k, v in args.items())
        return '\\l'.join(f'{i} = {_escape(one(a))}' for i, a in enumerate(args))

    def _label(self, module, node):
        label = '{' + f'name=%{node.name}|op_code={node.op}\\n'
        if node.op == Op.CALL_MODULE:
            leaf = module.get_submodule(node.target)
            label += f'\\n{_escape(type(leaf).__name__)}\\n|'
        else:
            target = node.target if isinstance(node.target, str) else \
                ember.fx.node._pretty_target(node.target)
            label += f'|target={_escape(target)}\\n'
            if node.args:
                label += f'|args=({self._args_str(node.args)})\\l'
            if node.kwargs:
                label += f'|kwargs=({self._args_str(node.kwargs)})\\l'
            label += f'|num_users={len(node.users)}\\n'
        meta = node.meta.get('tensor_meta')
        if meta is not None and hasattr(meta, 'shape'):
            label += f'|shape={_escape(str(tuple(meta.shape)))}\\n|dtype={meta.dtype}\\n'
        return label + '}'

    def _to_dot(self, gm, name):
        lines = [f'digraph "{name}" {{', 'rankdir=TB;']
        for node in gm.graph.nodes:
            if self._ignore_getattr and node.op == Op.GET_ATTR:
                continue
            lines.append(f'"{node.name}" [label="{self._label(gm, node)}", color={_COLORS.get(node.op, "white")}, '
                         f'fillcolor={_COLORS.get(node.op, "white")}, style=filled, shape={self.dot_graph_shape}, '
                         f'fontcolor=black];')
            if node.op == Op.CALL_MODULE and not self._ignore_params:
                leaf = gm.get_submodule(node.target)
                for pname, p in list(leaf.named_parameters(recurse=False)) + list(leaf.named_buffers(recurse=False)):
                    pid = f'{node.name}_{pname}'
                    label = '{' + f'name={node.name}.{pname}|{_escape(str(tuple(p.shape)))}' + '}'
                    lines.append(f'"{pid}" [label="{label}", color=white, fillcolor=white, style=filled, '
                                 f'shape={self.dot_graph_shape}];')
                    lines.append(f'"{pid}" -> "{node.name}";')
        for node in gm.graph.nodes:
            if self._ignore_getattr and node.op == Op.GET_ATTR:
                continue
            for user in node.users:
                if not (self._ignore_getattr and user.op == Op.GET_ATTR):
                    lines.append(f'"{node.name}" -> "{user.name}";')
        lines.append('}')
        graphs = self._pydot.graph_from_dot_data('\n'.join(lines) + '\n')
        return graphs[0]
