"""ember.fx graphs and what is built on them, against torch.fx where torch answers: Graph and Node editing,
GraphModule (code, pickling, copies, tracebacks, to_folder), Interpreter/Transformer, replace_pattern,
ShapeProp, split_module, FxGraphDrawer."""
import copy
import linecache
import operator
import pickle
import sys
import traceback
import types
import warnings

import numpy as np
import pytest
import torch
import torch.fx

import ember
import ember.fx
from ember.fx.passes.shape_prop import ShapeProp, TensorMetadata
from ember.fx.passes.split_module import split_module
from ember.fx import subgraph_rewriter


def build_graph(fx, lib):
    """The same hand-built graph in either library: x, y -> relu(x) + y -> neg -> output."""
    g = fx.Graph()
    x = g.placeholder('x')
    y = g.placeholder('y')
    r = g.call_function(lib.relu, (x,))
    a = g.call_function(operator.add, (r, y))
    n = g.call_method('neg', (a,))
    g.output(n)
    return g, (x, y, r, a, n)


def lines(g, lib_name):
    return str(g).replace(f'{lib_name}.', 'LIB.')


def both_graphs():
    return build_graph(torch.fx, torch), build_graph(ember.fx, ember)


# --- Graph and Node -----------------------------------------------------------------------------------

def test_node_properties_match_torch():
    (tg, tn), (eg, en) = both_graphs()
    for t, e in zip(tn, en):
        assert (e.op, e.name, repr(e)) == (t.op, t.name, repr(t))
        assert [u.name for u in e.users] == [u.name for u in t.users]
        assert [i.name for i in e.all_input_nodes] == [i.name for i in t.all_input_nodes]
        assert e.next.name == t.next.name and e.prev.name == t.prev.name
    assert en[3].args == (en[2], en[1]) and en[3].kwargs == {}
    assert en[0].meta == {} and len(eg.nodes) == len(tg.nodes) == 6
    assert lines(eg, 'ember') == lines(tg, 'torch')


def test_inserting_before_and_after_match_torch():
    out = []
    for fx, lib in ((torch.fx, torch), (ember.fx, ember)):
        g, (x, y, r, a, n) = build_graph(fx, lib)
        with g.inserting_after(r):
            s = g.call_function(lib.sigmoid, (r,))
            g.call_function(lib.tanh, (r,))      # each goes right after r: tanh before sigmoid, as in torch
        with g.inserting_before(n):
            m = g.call_function(operator.mul, (a, s))
        with g.inserting_before():
            g.placeholder('z')
        n.replace_input_with(a, m)
        g.lint()
        out.append((lines(g, lib.__name__), [u.name for u in a.users], [x.name for x in g.nodes]))
    assert out[0] == out[1]
    assert out[1][2] == ['z', 'x', 'y', 'relu', 'tanh', 'sigmoid', 'add', 'mul', 'neg', 'output']


def test_erase_node_with_users_is_an_error():
    errors = []
    for fx, lib in ((torch.fx, torch), (ember.fx, ember)):
        g, nodes = build_graph(fx, lib)
        with pytest.raises(RuntimeError) as info:
            g.erase_node(nodes[2])
        errors.append(str(info.value))
    assert errors[0] == errors[1] == 'Tried to erase Node relu but it still had 1 users in the graph: {add: None}!'


def test_replace_all_uses_with_and_dead_code_elimination():
    res = []
    for fx, lib in ((torch.fx, torch), (ember.fx, ember)):
        g, (x, y, r, a, n) = build_graph(fx, lib)
        with g.inserting_after(a):
            s = g.call_function(lib.sigmoid, (a,))
        changed = a.replace_all_uses_with(s, delete_user_cb=lambda u: u is not s)
        with g.inserting_before(n):
            g.call_function(lib.cos, (x,))     # dead
        removed = g.eliminate_dead_code()
        res.append(([c.name for c in changed], removed, lines(g, lib.__name__)))
    assert res[0] == res[1]
    assert 'cos' not in res[1][2] and res[1][1] is True


def test_nodes_iteration_survives_erasing_the_current_node():
    g, (x, y, r, a, n) = build_graph(ember.fx, ember)
    out = n.args[0]
    n.replace_all_uses_with(out)
    seen = []
    for node in g.nodes:
        seen.append(node.name)
        if node.op == 'call_method':
            g.erase_node(node)
    assert seen == ['x', 'y', 'relu', 'add', 'neg', 'output']
    assert [m.name for m in reversed(g.nodes)] == ['output', 'add', 'relu', 'y', 'x']
    assert len(g.nodes) == 5


def test_node_ordering_and_args_are_immutable():
    g, (x, y, r, a, n) = build_graph(ember.fx, ember)
    assert x < r < n and n > a and not (r < x)
    with g.inserting_after(x):
        new = g.call_function(ember.cos, (x,))
    assert x < new < y
    lst = g.call_function(ember.cat, ([x, y],))
    with pytest.raises(NotImplementedError, match='does not support mutation'):
        lst.args[0].append(r)
    lst.update_arg(0, [x, y, r])
    assert r in lst.all_input_nodes and lst in r.users
    lst.update_kwarg('dim', 0)
    assert lst.kwargs == {'dim': 0}


def test_lint_errors_match_torch():
    msgs = []
    for fx, lib in ((torch.fx, torch), (ember.fx, ember)):
        g, (x, y, r, a, n) = build_graph(fx, lib)
        with g.inserting_before(r):
            early = g.call_function(lib.sigmoid, (a,))       # used before defined
        with pytest.raises(RuntimeError) as info:
            g.lint()
        first = str(info.value).split('\n')[0]
        g.erase_node(early)
        other, _ = build_graph(fx, lib)
        foreign = next(iter(other.nodes))
        with g.inserting_before(n):
            g.call_function(lib.relu, (foreign,))
        with pytest.raises(RuntimeError) as info2:
            g.lint()
        msgs.append((first, str(info2.value).split('\n')[0]))
    assert msgs[0] == msgs[1]
    assert 'was used before it has been defined' in msgs[1][0]
    assert 'does not belong to this Graph' in msgs[1][1]


def test_lint_checks_targets_of_the_owning_module():
    gm = ember.fx.symbolic_trace(ember.nn.Sequential(ember.nn.Linear(2, 2)))
    gm.graph.lint()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        with gm.graph.inserting_before(None):
            gm.graph.get_attr('missing')
    assert 'no underlying reference' in str(w[0].message)
    with pytest.raises(RuntimeError, match='references nonexistent attribute missing'):
        gm.graph.lint()


def test_node_copy_graph_copy_and_deepcopy():
    g, (x, y, r, a, n) = build_graph(ember.fx, ember)
    r.meta['tag'] = 1
    g2 = copy.deepcopy(g)
    assert str(g2) == str(g) and all(p is not q for p, q in zip(g.nodes, g2.nodes))
    assert [m.meta for m in g2.nodes][2] == {'tag': 1}
    g3 = ember.fx.Graph()
    env = {}
    out = g3.graph_copy(g, env)
    g3.output(out)
    assert str(g3) == str(g) and env[r].graph is g3
    g4 = ember.fx.Graph()
    p = g4.placeholder('p')
    c = g4.node_copy(r, lambda old: p)
    assert c.args == (p,) and c.target is ember.relu and c.meta == {'tag': 1}


def test_name_uniquing_matches_torch():
    names = []
    for fx, lib in ((torch.fx, torch), (ember.fx, ember)):
        g = fx.Graph()
        x = g.placeholder('x')
        g.placeholder('x')
        g.placeholder('input')
        for target in (lib.relu, lib.relu, operator.add):
            g.call_function(target, (x,))
        g.call_method('sum', (x,))
        g.call_method('__add__', (x, x))
        g.get_attr('foo.bar_Baz')
        g.call_module('layer1.0.convBlock', (x,))
        g.create_node('call_function', lib.add, (x,), name='_private')
        g.create_node('call_function', lib.add, (x,), name='Foo.Bar')
        g.create_node('call_function', lib.add, (x,), name='add_1')
        g.create_node('call_function', lib.add, (x,), name='add')
        g.create_node('call_function', lib.add, (x,), name='3d')
        g.call_function(getattr, (x, 'shape'))
        g.call_function(len, (x,))
        names.append([n.name for n in g.nodes])
    assert names[0] == names[1]
    assert names[1][:3] == ['x', 'x_1', 'input_1'] and 'sum_1' in names[1] and 'getattr_1' in names[1]


def test_python_code_and_print_tabular(capsys, monkeypatch):
    eg = build_graph(ember.fx, ember)[0]
    tg = build_graph(torch.fx, torch)[0]
    pc = eg.python_code('self')
    assert pc.src == tg.python_code('self').src.replace('torch.', 'ember.')
    assert pc.globals['ember'] is ember
    monkeypatch.setitem(sys.modules, 'tabulate', None)
    with pytest.raises(ImportError):
        eg.print_tabular()
    assert 'relies on the library `tabulate`' in capsys.readouterr().out
    fake = types.ModuleType('tabulate')
    fake.tabulate = lambda rows, headers: f'{headers} {[r[:2] for r in rows]}'
    monkeypatch.setitem(sys.modules, 'tabulate', fake)
    eg.print_tabular()
    assert capsys.readouterr().out.strip() == ("['opcode', 'name', 'target', 'args', 'kwargs'] [['placeholder', "
                                               "'x'], ['placeholder', 'y'], ['call_function', 'relu'], "
                                               "['call_function', 'add'], ['call_method', 'neg'], ['output', "
                                               "'output']]")


def test_generated_code_for_operators_and_special_targets_matches_torch():
    codes = []
    for fx, lib in ((torch.fx, torch), (ember.fx, ember)):
        g = fx.Graph()
        x = g.placeholder('x', default_value=2.0)
        a = g.call_function(operator.iadd, (x, 1))
        g.call_function(operator.setitem, (a, 0, 1))
        g.call_function(operator.neg, (a,))
        g.call_function(operator.abs, (a,))
        g.call_function(getattr, (a, '1x'))
        g.call_function(getattr, (a, 'shape'))
        g.call_function(operator.getitem, (a, (slice(None), None, Ellipsis)))
        g.call_function(lib.nn.functional.relu, (a,), {'inplace': False})
        m = g.call_module('layers.0.conv', (a,))
        g.output({'m': m, 'inf': float('inf')})
        codes.append(fx.GraphModule({'layers.0.conv': lib.nn.Identity()}, g).code.replace('torch.', 'ember.'))
    assert codes[0] == codes[1]
    assert 'x += 1;  iadd = x' in codes[1] and 'getattr(self.layers, "0").conv(iadd)' in codes[1]


# --- GraphModule ----------------------------------------------------------------------------------------

class Net(ember.nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = ember.nn.Sequential(ember.nn.Linear(4, 4), ember.nn.ReLU())
        self.register_buffer('shift', ember.full((4,), 0.5))
        self.w = ember.nn.Parameter(ember.ones(4))

    def forward(self, x):
        return self.sub(x) * self.w + self.shift


def test_graph_module_copies_only_what_the_graph_uses_and_state_dict():
    net = Net()
    net.unused = ember.nn.Linear(2, 2)
    gm = ember.fx.symbolic_trace(net)
    assert sorted(gm.state_dict()) == ['shift', 'sub.0.bias', 'sub.0.weight', 'w']
    assert gm.get_submodule('sub.0') is net.sub[0] and not hasattr(gm, 'unused')
    assert type(gm).__name__ == 'Net' and isinstance(gm, ember.fx.GraphModule)
    x = ember.randn(3, 4)
    np.testing.assert_allclose(gm(x).detach().numpy(), net(x).detach().numpy())
    gm2 = ember.fx.GraphModule({'sub.0': net.sub[0], 'sub.1': net.sub[1], 'w': net.w, 'shift': net.shift},
                               gm.graph, 'FromDict')
    np.testing.assert_allclose(gm2(x).detach().numpy(), net(x).detach().numpy())
    with pytest.raises(RuntimeError, match='referenced target w but that target was not provided'):
        ember.fx.GraphModule({'sub.0': net.sub[0], 'sub.1': net.sub[1]}, gm.graph)


def test_recompile_after_editing_the_graph():
    net = Net()
    gm = ember.fx.symbolic_trace(net)
    x = ember.randn(2, 4)
    for n in gm.graph.nodes:
        if n.op == 'call_function' and n.target is operator.mul:
            with gm.graph.inserting_after(n):
                t = gm.graph.call_function(ember.tanh, (n,))
            n.replace_all_uses_with(t, delete_user_cb=lambda u: u is not t)
    gm.recompile()
    assert 'ember.tanh(mul)' in gm.code
    expect = ember.tanh(net.sub(x) * net.w) + net.shift
    np.testing.assert_allclose(gm(x).detach().numpy(), expect.detach().numpy(), rtol=1e-6)


def test_pickle_and_deepcopy_round_trip():
    net = Net()
    gm = ember.fx.symbolic_trace(net)
    x = ember.randn(2, 4)
    expect = gm(x).detach().numpy()
    for other in (pickle.loads(pickle.dumps(gm)), copy.deepcopy(gm)):
        assert type(other).__name__ == 'Net'
        assert other.code == gm.code
        np.testing.assert_allclose(other(x).detach().numpy(), expect)
        assert other.w is not gm.w
        other.w.data.fill_(2.0)
        assert float(gm.w[0]) == 1.0


def test_pickle_keeps_wrapped_functions():
    import test_fx
    gm = ember.fx.symbolic_trace(_uses_helper)
    again = pickle.loads(pickle.dumps(gm))
    assert [n.target for n in again.graph.nodes if n.op == 'call_function'][0] is test_fx.helper
    np.testing.assert_allclose(again(ember.ones(1)).numpy(), [3.0])


def _uses_helper(x):
    import test_fx
    return test_fx.helper(x) + 1


def test_print_readable_and_str_match_torch(capsys):
    def build(lib):
        class Sub(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.l = lib.nn.Linear(2, 2)

            def forward(self, x):
                return self.l(x)

        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.sub = Sub()

            def forward(self, x):
                return self.sub(x).relu()
        return M()
    tg, eg = torch.fx.symbolic_trace(build(torch)), ember.fx.symbolic_trace(build(ember))
    assert eg.print_readable(print_output=False) == tg.print_readable(print_output=False).replace('torch.', 'ember.')
    eg.print_readable()
    assert capsys.readouterr().out.startswith('class M(ember.nn.Module):\n    def forward(self, x):')
    assert str(eg).endswith('# To see more debug info, please use `graph_module.print_readable()`')
    assert str(eg).split('\n')[-2] == str(tg).split('\n')[-2]


def test_split_module_print_readable_nests_submodules_like_torch():
    def build(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = lib.nn.Linear(3, 3)

            def forward(self, x):
                return lib.relu(self.a(x)) + 1
        return M()
    outs = []
    for lib, fx, split in ((torch, torch.fx, torch.fx.passes.split_module.split_module),
                           (ember, ember.fx, split_module)):
        m = build(lib)
        gm = fx.symbolic_trace(m)
        sm = split(gm, m, lambda n: 0 if n.name in ('a', 'relu') else 1)
        outs.append(sm.print_readable(print_output=False).replace('torch.', 'ember.'))
    assert outs[0] == outs[1]


def test_traceback_through_generated_code_names_the_node():
    class Bad(ember.nn.Module):
        def forward(self, x, y):
            return ember.relu(x) @ y
    gm = ember.fx.symbolic_trace(Bad())
    with pytest.raises(RuntimeError) as info:
        gm(ember.ones(2, 3), ember.ones(2, 3))
    frames = traceback.extract_tb(info.value.__traceback__)
    gen = [f for f in frames if f.filename.startswith('<eval_with_key>')]
    assert gen and gen[-1].line == 'matmul = relu @ y;  relu = y = None'
    assert linecache.getline(gen[-1].filename, gen[-1].lineno).strip() == gen[-1].line
    note = '\n'.join(getattr(info.value, '__notes__', []))
    assert "node 'matmul'" in note and '<--- HERE' in note


def test_to_folder_writes_an_importable_module(tmp_path):
    net = Net()
    gm = ember.fx.symbolic_trace(net)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        gm.to_folder(tmp_path / 'pkg', 'Saved')
    src = (tmp_path / 'pkg' / 'module.py').read_text()
    assert 'class Saved(ember.nn.Module):' in src and 'def forward(self, x):' in src
    sys.path.insert(0, str(tmp_path))
    try:
        import pkg
        loaded = pkg.Saved()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop('pkg', None)
        sys.modules.pop('pkg.module', None)
    x = ember.randn(2, 4)
    np.testing.assert_allclose(loaded(x).detach().numpy(), gm(x).detach().numpy())


def test_submodule_management():
    gm = ember.fx.symbolic_trace(Net())
    assert gm.add_submodule('extra.lin', ember.nn.Linear(1, 1))
    assert isinstance(gm.get_submodule('extra.lin'), ember.nn.Linear)
    gm.delete_all_unused_submodules()
    assert not hasattr(gm, 'extra')
    assert gm.delete_submodule('sub.1') and not gm.delete_submodule('sub.1')


# --- Interpreter and Transformer ---------------------------------------------------------------------

def test_interpreter_runs_and_overrides():
    net = Net()
    gm = ember.fx.symbolic_trace(net)
    x = ember.randn(2, 4)
    np.testing.assert_allclose(ember.fx.Interpreter(gm).run(x).detach().numpy(), net(x).detach().numpy())

    class Log(ember.fx.Interpreter):
        def __init__(self, m):
            super().__init__(m)
            self.ops = []

        def run_node(self, n):
            self.ops.append(n.op)
            return super().run_node(n)

        def call_module(self, target, args, kwargs):
            return args[0]          # skip every submodule
    log = Log(gm)
    out = log.run(x)
    np.testing.assert_allclose(out.detach().numpy(), (x * net.w + net.shift).detach().numpy())
    assert log.ops == ['placeholder', 'call_module', 'call_module', 'get_attr', 'call_function', 'get_attr',
                       'call_function', 'output']
    args = [x]
    np.testing.assert_allclose(ember.fx.Interpreter(gm).boxed_run(args).detach().numpy(), net(x).detach().numpy())
    assert args == []


def test_interpreter_frees_dead_values_like_torch():
    left = []
    for lib, fx in ((torch, torch.fx), (ember, ember.fx)):
        gm = fx.symbolic_trace(rewriter_model(lib))
        for gc in (True, False):
            interp = fx.Interpreter(gm, garbage_collect_values=gc)
            interp.run(lib.ones(2, 4), lib.ones(2, 4))
            left.append([n.name for n in interp.env])
    assert left[:2] == left[2:]
    assert left[2] == ['output'] and len(left[3]) == 11


def test_interpreter_helpers_and_errors():
    gm = ember.fx.symbolic_trace(Net())
    interp = ember.fx.Interpreter(gm)
    with pytest.raises(RuntimeError, match='Expected positional argument for parameter x'):
        interp.run()
    mul = next(n for n in gm.graph.nodes if n.target is operator.mul)
    interp.env = {n: i for i, n in enumerate(gm.graph.nodes)}
    args, kwargs = interp.fetch_args_kwargs_from_env(mul)
    assert args == (2, 3) and kwargs == {}
    assert interp.map_nodes_to_values((mul.args[0], [mul.args[1]]), mul) == (2, [3])
    with pytest.raises(RuntimeError) as info:
        ember.fx.Interpreter(gm).run(ember.ones(3))
    assert 'While executing %sub_0' in str(info.value)


def test_transformer_swaps_relu_for_gelu_like_torch():
    def build(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(4, 4)

            def forward(self, x):
                return lib.relu(self.lin(x)).sum(dim=-1) + lib.nn.functional.relu(x).mean()
        return M()

    def transformer(fx, lib):
        class Swap(fx.Transformer):
            def call_function(self, target, args, kwargs):
                if target in (lib.relu, lib.nn.functional.relu):
                    return super().call_function(lib.nn.functional.gelu, args, {})
                return super().call_function(target, args, kwargs)
        return Swap
    tm, em = build(torch), build(ember)
    em.load_state_dict({k: ember.from_numpy(v.numpy().copy()) for k, v in tm.state_dict().items()})
    tnew = transformer(torch.fx, torch)(torch.fx.symbolic_trace(tm)).transform()
    enew = transformer(ember.fx, ember)(ember.fx.symbolic_trace(em)).transform()
    assert enew.code.replace('ember.nn.functional.gelu', 'GELU') == \
        tnew.code.replace('torch._C._nn.gelu', 'GELU').replace('torch.', 'ember.')
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(enew(ember.from_numpy(x)).detach().numpy(),
                               tnew(torch.from_numpy(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert ember.relu not in [n.target for n in enew.graph.nodes]


# --- subgraph_rewriter ------------------------------------------------------------------------------------

def rewriter_model(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.l = lib.nn.Linear(4, 4)
            self.l2 = lib.nn.Linear(4, 4)

        def forward(self, x, y):
            a = lib.relu(self.l(x))
            c = lib.relu(self.l2(a + y))
            return lib.relu(c * 2).sum(), c
    return M()


def describe(results):
    return [(r.anchor.name, {k.name: v.name for k, v in r.nodes_map.items()},
             [n.name for n in getattr(r, 'replacements', [])]) for r in results]


def test_replace_pattern_matches_torch():
    out = []
    for lib, fx, rw in ((torch, torch.fx, torch.fx.subgraph_rewriter), (ember, ember.fx, subgraph_rewriter)):
        gm = fx.symbolic_trace(rewriter_model(lib))
        res = rw.replace_pattern(gm, lambda x: lib.relu(x * 2), lambda x: lib.sigmoid(x) * 2)
        res2 = rw.replace_pattern(gm, lambda x: lib.relu(x), lambda x: lib.tanh(x))
        gm.graph.lint()
        out.append((describe(res), describe(res2), gm.code.replace('torch.', 'ember.'),
                    type(res[0]).__name__))
    assert out[0] == out[1]
    assert out[1][0] == [('relu', {'relu': 'relu_2', 'mul': 'mul', 'x': 'relu_1'}, [])]
    assert len(out[1][1]) == 2


def test_replace_pattern_with_filters_matches_torch():
    out = []
    for lib, fx, rw in ((torch, torch.fx, torch.fx.subgraph_rewriter), (ember, ember.fx, subgraph_rewriter)):
        gm = fx.symbolic_trace(rewriter_model(lib))
        only_first = lambda m, g, p: m.placeholder_nodes[0].name == 'l'     # noqa: E731
        res = rw.replace_pattern_with_filters(gm, lambda x: lib.relu(x), lambda x: lib.sigmoid(x), [only_first])
        out.append((describe(res), gm.code.replace('torch.', 'ember.'), type(res[0]).__name__))
    assert out[0] == out[1]
    assert out[1][0] == [('relu', {'relu': 'relu', 'x': 'l'}, ['sigmoid'])] and out[1][2] == 'ReplacedPatterns'


def test_overlapping_and_leaking_matches_are_dropped_like_torch():
    def build(lib):
        class M(lib.nn.Module):
            def forward(self, x):
                a = lib.relu(lib.relu(lib.relu(x)))         # three relus: one non-overlapping relu(relu())
                b = lib.sigmoid(x)
                c = lib.tanh(b) + b                          # b leaks out of a tanh(sigmoid()) match
                return a, c
        return M()
    out = []
    for lib, fx, rw in ((torch, torch.fx, torch.fx.subgraph_rewriter), (ember, ember.fx, subgraph_rewriter)):
        gm = fx.symbolic_trace(build(lib))
        r1 = rw.replace_pattern(gm, lambda x: lib.relu(lib.relu(x)), lambda x: lib.abs(x))
        r2 = rw.replace_pattern(gm, lambda x: lib.tanh(lib.sigmoid(x)), lambda x: lib.cos(x))
        out.append((describe(r1), describe(r2), gm.code.replace('torch.', 'ember.')))
    assert out[0] == out[1]
    assert len(out[1][0]) == 1 and out[1][1] == []


def test_replaced_module_still_computes():
    m = rewriter_model(ember)
    gm = ember.fx.symbolic_trace(m)
    ember.fx.replace_pattern(gm, lambda x: ember.relu(x), lambda x: ember.clamp(x, min=0))
    x, y = ember.randn(2, 4), ember.randn(2, 4)
    for a, b in zip(gm(x, y), m(x, y)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)


# --- passes -----------------------------------------------------------------------------------------------------

def test_shape_prop_matches_torch():
    def build(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = lib.nn.Conv2d(3, 4, 3)

            def forward(self, x):
                h = self.conv(x)
                return h.sum(), (h.permute(0, 2, 3, 1), 3), h.shape[0]
        return M()
    metas = []
    for lib, fx, prop in ((torch, torch.fx, torch.fx.passes.shape_prop.ShapeProp), (ember, ember.fx, ShapeProp)):
        gm = fx.symbolic_trace(build(lib))
        x = lib.zeros(2, 3, 8, 8)
        prop(gm).propagate(x)
        rows = []
        for n in gm.graph.nodes:
            def plain(m):
                if type(m).__name__ == 'TensorMetadata':
                    return (tuple(m.shape), str(m.dtype).split('.')[-1], m.requires_grad, tuple(m.stride),
                            str(m.memory_format).split('.')[-1], m.is_quantized, m.qparams)
                if isinstance(m, tuple):
                    return tuple(plain(e) for e in m)
                return m
            rows.append((n.name, plain(n.meta.get('tensor_meta')), n.meta['type'].__name__))
        metas.append(rows)
    assert metas[0] == metas[1]
    assert TensorMetadata._fields == torch.fx.passes.shape_prop.TensorMetadata._fields


@pytest.mark.parametrize('shape, perm', [((2, 3), (0, 1)), ((3, 2), (1, 0)), ((2, 8, 8, 3), (0, 3, 1, 2)),
                                         ((2, 4, 4, 4, 3), (0, 4, 1, 2, 3)), ((1, 1, 4, 3), (0, 3, 1, 2))])
def test_tensor_metadata_memory_format_matches_torch(shape, perm):
    from ember.fx.passes.shape_prop import _extract_tensor_metadata
    from torch.fx.passes.shape_prop import _extract_tensor_metadata as torch_extract
    t = torch_extract(torch.zeros(shape).permute(perm))
    e = _extract_tensor_metadata(ember.zeros(shape).permute(perm))
    assert (tuple(e.shape), tuple(e.stride), str(e.memory_format).split('.')[-1]) == \
        (tuple(t.shape), tuple(t.stride), str(t.memory_format).split('.')[-1])


def test_shape_prop_on_meta_tensors():
    gm = ember.fx.symbolic_trace(Net()).to('meta')
    ShapeProp(gm).propagate(ember.empty(5, 4, device='meta'))
    out = next(n for n in gm.graph.nodes if n.op == 'output')
    assert tuple(out.meta['tensor_meta'].shape) == (5, 4)
    assert out.meta['tensor_meta'].requires_grad


def test_split_module_matches_torch():
    out = []
    for lib, fx, split in ((torch, torch.fx, torch.fx.passes.split_module.split_module),
                           (ember, ember.fx, split_module)):
        m = rewriter_model(lib)
        gm = fx.symbolic_trace(m)
        part = {'l': 0, 'relu': 0, 'add': 1, 'l2': 1, 'relu_1': 1, 'mul': 2, 'relu_2': 2, 'sum_1': 2}
        qualnames = {}
        sm = split(gm, m, lambda n: part[n.name], qualname_map=qualnames)
        codes = [sm.code] + [c.code for _, c in sm.named_children()]
        out.append(([c.replace('torch.', 'ember.') for c in codes], [n for n, _ in sm.named_modules()], qualnames))
    assert out[0] == out[1]
    assert len(out[1][0]) == 4


def test_split_module_with_independent_partitions_matches_torch():
    def build(lib):
        class M(lib.nn.Module):
            def forward(self, x, y):
                a = lib.relu(x)
                b = lib.tanh(y)
                c = lib.sigmoid(x)
                return a + b + c
        return M()
    out = []
    for lib, fx, split in ((torch, torch.fx, torch.fx.passes.split_module.split_module),
                           (ember, ember.fx, split_module)):
        m = build(lib)
        part = {'relu': 0, 'tanh': 1, 'sigmoid': 2, 'add': 3, 'add_1': 3}
        sm = split(fx.symbolic_trace(m), m, lambda n: part[n.name])
        out.append(sm.code.replace('torch.', 'ember.'))
    assert out[0] == out[1]


def test_split_module_results():
    m = rewriter_model(ember)
    gm = ember.fx.symbolic_trace(m)
    sm = split_module(gm, m, lambda n: 0 if n.name in ('l', 'relu') else 1)
    x, y = ember.randn(3, 4), ember.randn(3, 4)
    for a, b in zip(sm(x, y), m(x, y)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)


def test_graph_drawer_needs_pydot(monkeypatch):
    from ember.fx.passes.graph_drawer import FxGraphDrawer
    gm = ember.fx.symbolic_trace(Net())
    monkeypatch.setitem(sys.modules, 'pydot', None)
    with pytest.raises(ImportError, match='requires the pydot package'):
        FxGraphDrawer(gm, 'net')
    with pytest.raises(RuntimeError, match='requires the pydot package'):     # torch's class for it
        FxGraphDrawer(gm, 'net')


def test_graph_drawer_writes_dot(monkeypatch):
    from ember.fx.passes.graph_drawer import FxGraphDrawer
    fake = types.ModuleType('pydot')

    class Dot:
        def __init__(self, text):
            self.text = text

        def to_string(self):
            return self.text
    fake.graph_from_dot_data = lambda text: [Dot(text)]
    monkeypatch.setitem(sys.modules, 'pydot', fake)
    gm = ember.fx.symbolic_trace(Net())
    ShapeProp(gm).propagate(ember.randn(2, 4))
    dot = FxGraphDrawer(gm, 'net').get_dot_graph().to_string()
    assert dot.startswith('digraph "net" {')
    for edge in ('"x" -> "sub_0"', '"sub_0" -> "sub_1"', '"mul" -> "add"', '"add" -> "output"', '"sub_0_weight" -> "sub_0"'):
        assert edge in dot
    assert 'op_code=call_function' in dot and 'target=operator.mul' in dot and 'shape=(2, 4)' in dot
