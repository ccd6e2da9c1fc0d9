"""GraphModule: an ember.nn.Module whose forward is generated from a Graph (torch.fx.GraphModule).

The module holds the submodules, parameters and buffers its graph reads (copied from ``root``), and
``recompile`` writes the graph as Python (``.code``), compiles it under a unique file name registered with
``linecache`` (tracebacks show the generated lines) and installs it as ``forward`` on the instance's own
class. An exception raised in generated code gets a note naming the node and its line. Pickling keeps the
code and the attributes, and traces the code again on load, as torch does.
"""
import copy
import itertools
import linecache
import os
import sys
from ember._warn import warnings

import ember

from .graph import Graph, _custom_builtins
from .node import Op

__all__ = ['GraphModule', 'reduce_graph_module']

_next_key = itertools.count()


def _exec_with_source(src, globals_):
    key = f'<eval_with_key>.{next(_next_key)}'
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    exec(compile(src, key, 'exec'), globals_)
    return key


def _forward_from_src(src, globals_):
    g = dict(globals_)
    key = _exec_with_source(src, g)
    return g['forward'], key


def _format_import_statement(name, obj):
    builtins_ = _custom_builtins()
    if name in builtins_:
        return builtins_[name].import_str
    module = getattr(obj, '__module__', None)
    if module is None:
        raise RuntimeError(f'cannot write an import for {name} = {obj!r}')
    return f'from {module} import {obj.__name__} as {name}'


def _format_import_block(globals_):
    return '\n'.join(sorted({_format_import_statement(n, o) for n, o in globals_.items()})) + '\n'


def _copy_attr(from_module, to_module, target):
    *prefix, field = target.split('.')
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return          # already installed (a whole submodule was copied)
        if t is None:
            t = ember.nn.Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    # a tensor that is not a parameter becomes a buffer, so that state_dict and .to() see it
    if isinstance(orig, ember.Tensor) and not isinstance(orig, ember.nn.Parameter):
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj, to_module, target):
    *prefix, field = target.split('.')
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = ember.nn.Module()
            setattr(to_module, item, t)
        to_module = t
    if isinstance(from_obj, ember.Tensor) and not isinstance(from_obj, ember.nn.Parameter):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


def _addindent(s, n):
    lines = s.split('\n')
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + '\n' + '\n'.join(' ' * n + line for line in lines)


class _CodeOnlyModule(ember.nn.Module):
    def __init__(self, body):
        super().__init__()
        self.__dict__ = body


def _deserialize_graph_module(forward, body):
    """A GraphModule from its generated forward and attributes: trace the code again, every module a leaf."""
    from ._symbolic_trace import Tracer

    class CodeOnlyModule(_CodeOnlyModule):
        pass
    CodeOnlyModule.forward = forward
    tracer_cls = body.get('_tracer_cls') or Tracer

    class KeepModules(tracer_cls):
        def is_leaf_module(self, m, qualname):
            return True
    com = CodeOnlyModule(body)
    graph = KeepModules().trace(com)
    graph._tracer_cls = tracer_cls
    gm = GraphModule(com, graph, class_name=body.get('_graphmodule_cls_name', 'GraphModule'))
    for k, v in body.items():
        if not hasattr(gm, k):
            setattr(gm, k, v)
    return gm


def reduce_graph_module(body, import_block):
    """Unpickling: rebuild from the code and attributes ``GraphModule.__reduce__`` kept."""
    forward, _ = _forward_from_src(import_block + body['_code'], {})
    return _deserialize_graph_module(forward, body)


class GraphModule(ember.nn.Module):
    """A Module generated from a Graph: ``GraphModule(root, graph, class_name='GraphModule')`` copies the
    submodules, parameters and buffers the graph uses from ``root`` (a Module, or a dict from target to
    object) and compiles the graph as ``forward``.

    >>> import ember, ember.fx as fx
    >>> gm = fx.symbolic_trace(ember.nn.Sequential(ember.nn.Linear(3, 2), ember.nn.ReLU()))
    >>> print(gm.code.strip())
    def forward(self, input):
        input_1 = input
        _0 = getattr(self, "0")(input_1);  input_1 = None
        _1 = getattr(self, "1")(_0);  _0 = None
        return _1
    """

    def __new__(cls, *args, **kwargs):
        # every instance gets its own class, so that recompile() can install forward on it
        for t in cls.__mro__:
            if t.__qualname__.split('.')[-1] != 'GraphModuleImpl':
                cls = t
                break

        class GraphModuleImpl(cls):
            __module__ = GraphModule.__module__     # torch.fx.graph_module under ember run, as torch's
        return super().__new__(GraphModuleImpl)

    def __init__(self, root, graph, class_name='GraphModule'):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, ember.nn.Module):
            if hasattr(root, 'training'):
                self.training = root.training
            for node in graph.nodes:
                if node.op in (Op.GET_ATTR, Op.CALL_MODULE):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            targets = []
            for node in graph.nodes:
                if node.op in (Op.GET_ATTR, Op.CALL_MODULE):
                    if node.target not in root:
                        raise RuntimeError(f'Node {node} referenced target {node.target} but that target was not '
                                           f'provided in ``root``!')
                    targets.append(node.target)
            for target in sorted(dict.fromkeys(targets), key=lambda t: t.count('.')):
                _assign_attr(root[target], self, target)
        else:
            raise RuntimeError(f'Unsupported type {root} passed for root!')
        self.graph = graph
        self._tracer_cls = graph._tracer_cls if graph._tracer_cls is not None and \
            '<locals>' not in graph._tracer_cls.__qualname__ else None
        self._tracer_extras = graph._tracer_extras
        self._graphmodule_cls_name = class_name
        self.meta = {}

    # --- the graph and its code -----------------------------------------------------------------
    @property
    def graph(self):
        """The Graph this module runs; assigning one recompiles."""
        return self._graph

    @graph.setter
    def graph(self, g):
        if not isinstance(g, Graph):
            raise AssertionError(f'Expected a Graph instance, but got {type(g)}')
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self):
        """The Python source of the generated ``forward``."""
        if not hasattr(self, '_code'):
            raise RuntimeError('Code has not been generated! Please report a bug to ember')
        return self._code

    def recompile(self):
        """Write ``self.graph`` as Python again and install it as ``forward`` (after editing the graph)."""
        python_code = self._graph.python_code(root_module='self')
        self._code = python_code.src
        self._lineno_map = python_code._lineno_map
        forward, self._code_key = _forward_from_src(self._code, python_code.globals)
        type(self).forward = forward
        return python_code

    def __call__(self, *args, **kwargs):
        try:
            return ember.nn.Module.__call__(self, *args, **kwargs)
        except Exception as e:
            self._note_generated_line(e)
            raise

    def _note_generated_line(self, e):
        """Name the node and show the generated line an exception came from (torch prints the same)."""
        tb, lineno = e.__traceback__, None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == getattr(self, '_code_key', None):
                lineno = tb.tb_lineno
            tb = tb.tb_next
        if lineno is None or getattr(e, '_fx_noted', None) == self._code_key:
            return
        lines = self._code.split('\n')
        node = self._lineno_map.get(lineno)
        context = lines[max(lineno - 3, 0):lineno] + ['~' * len(lines[lineno - 1]) + ' <--- HERE'] + \
            lines[lineno:lineno + 2]
        where = f", node '{node}'" if node else ''
        note = (f"Call using an FX-traced Module, line {lineno} of the traced Module's generated forward "
                f"function{where}:\n" + '\n'.join(context))
        try:
            e._fx_noted = self._code_key
        except AttributeError:
            pass
        if hasattr(e, 'add_note'):
            e.add_note(note)
        else:                       # Python 3.10
            print(note, file=sys.stderr)

    def print_readable(self, print_output=True, include_stride=False, include_device=False, colored=False):
        """The generated code as a class, with stack-trace comments and the GraphModule submodules nested."""
        out = _print_readable(self, self._get_name())
        if print_output:
            print(out)
        return out

    def __str__(self):
        return '\n'.join([super().__str__(), self._code,
                          '# To see more debug info, please use `graph_module.print_readable()`'])

    # --- submodules -----------------------------------------------------------------------------
    def add_submodule(self, target, m):
        """Install ``m`` at the dotted path ``target``, creating empty Modules on the way."""
        *prefix, field = target.split('.')
        mod = self
        for item in prefix:
            sub = getattr(mod, item, None)
            if sub is None:
                sub = ember.nn.Module()
                setattr(mod, item, sub)
            if not isinstance(sub, ember.nn.Module):
                return False
            mod = sub
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target):
        """Remove the submodule at ``target``; False when there is none."""
        *path, last = target.split('.')
        mod = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, ember.nn.Module):
                return False
        if not isinstance(getattr(mod, last, None), ember.nn.Module):
            return False
        delattr(mod, last)
        return True

    def delete_all_unused_submodules(self):
        """Remove every submodule no Node of the graph refers to."""
        used = set()
        for node in self.graph.nodes:
            if node.op in (Op.CALL_MODULE, Op.GET_ATTR):
                atoms = node.target.split('.')
                used.update('.'.join(atoms[:i + 1]) for i in range(len(atoms)))
                if node.op == Op.CALL_MODULE:
                    try:
                        sub = self.get_submodule(node.target)
                    except AttributeError:
                        continue
                    used.update(f'{node.target}.{n}' for n, _ in sub.named_modules() if n)
        for name in [n for n, _ in self.named_modules() if n and n not in used]:
            self.delete_submodule(name)

    # --- copies ---------------------------------------------------------------------------------
    def __reduce__(self):
        body = self.__dict__.copy()
        python_code = self.recompile()
        body['_code'] = self._code
        del body['_graph']
        return (reduce_graph_module, (body, _format_import_block(python_code.globals)))

    def __deepcopy__(self, memo):
        res = type(self).__new__(type(self))
        memo[id(self)] = res
        fake = _CodeOnlyModule(copy.deepcopy(self.__dict__, memo))
        GraphModule.__init__(res, fake, fake.__dict__['_graph'], self._graphmodule_cls_name)
        for attr in ('_state_dict_hooks', '_load_state_dict_pre_hooks', '_load_state_dict_post_hooks'):
            if attr in self.__dict__:
                setattr(res, attr, copy.deepcopy(self.__dict__[attr], memo))
        res.meta = copy.deepcopy(getattr(self, 'meta', {}), memo)
        return res

    def __copy__(self):
        res = GraphModule(self, self.graph, self._graphmodule_cls_name)
        res.meta = getattr(self, 'meta', {})
        return res

    def to_folder(self, folder, module_name='FxModule'):
        """Write this module as a Python package in ``folder``: ``module.py`` defines class ``module_name``
        (simple submodules as constructor calls, others loaded from pickles beside it) and loads
        ``state_dict.pt``."""
        os.makedirs(folder, exist_ok=True)
        ember.save(self.state_dict(), os.path.join(folder, 'state_dict.pt'))
        tab = ' ' * 4
        imports = '\n'.join(b.import_str for b in _custom_builtins().values())
        src = (f'\n{imports}\n\nfrom ember.nn import *\nclass {module_name}(ember.nn.Module):\n'
               f'{tab}def __init__(self):\n{tab * 2}super().__init__()\n')
        nn = ember.nn
        safe = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)
        pickled = []
        for name, mod in self.named_children():
            comment = ''
            if type(mod) in safe:
                mod_src = repr(mod)
            else:
                path = os.path.join(folder, f'{name}.pt')
                ember.save(mod, path)
                pickled.append(name)
                mod_src = f"ember.load(r'{path}', weights_only=False)"
                comment = ' # ' + repr(mod).replace('\r', ' ').replace('\n', ' ')
            src += f"{tab * 2}setattr(self, '{name}', {mod_src}){comment}\n"
        for name, buf in self._buffers.items():
            if buf is not None:
                src += f"{tab * 2}self.register_buffer('{name}', ember.empty({list(buf.shape)}, dtype={buf.dtype}))\n"
        for name, p in self._parameters.items():
            if p is not None:
                src += f'{tab * 2}self.{name} = ember.nn.Parameter(ember.empty({list(p.shape)}, dtype={p.dtype}))\n'
        src += f"{tab * 2}self.load_state_dict(ember.load(r'{os.path.join(folder, 'state_dict.pt')}'))\n"
        src += f'{_addindent(self.code, 4)}\n'
        with open(os.path.join(folder, 'module.py'), 'w') as f:
            f.write(src)
        with open(os.path.join(folder, '__init__.py'), 'w') as f:
            f.write('from .module import *')
        if pickled:
            warnings.warn(f'Was not able to save the following children modules as reprs -saved as pickled files '
                          f'instead: {pickled}')


def _indent_lines(s, n):
    """Every line but the first indented by ``n``; blank lines left empty."""
    first, *rest = s.split('\n')
    return '\n'.join([first] + [' ' * n + line if line.strip() else '' for line in rest])


def _print_readable(module, name):
    code = module.graph.python_code(root_module='self', verbose=True).src.lstrip('\n')
    out = _indent_lines(f'class {name}(ember.nn.Module):\n' + code, 4)
    subs = ['']
    for sub_name, sub in module.named_children():
        if isinstance(sub, GraphModule):
            subs.append(_print_readable(sub, sub_name))
    return out + _indent_lines('\n'.join(subs), 4)
