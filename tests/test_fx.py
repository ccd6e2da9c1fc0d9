"""ember.fx symbolic tracing against torch.fx: the same model is built in both libraries, traced by both,
and the node lists, the generated code and the results compared."""
import math
import operator

import numpy as np
import pytest
import torch
import torch.fx

import ember
import ember.fx
from ember.fx.proxy import TraceError


# --- helpers ---------------------------------------------------------------------------------------

def _target_name(t):
    if isinstance(t, str):
        return t
    name = t.__name__ if getattr(operator, getattr(t, '__name__', ''), None) is t else None
    if name is not None:
        return f'operator.{name}'
    for lib, prefix in ((torch, 'torch'), (ember, 'ember')):
        for ns in ('', '.nn.functional'):
            mod = eval(prefix + ns, {'torch': torch, 'ember': ember})
            if getattr(mod, getattr(t, '__name__', '?'), None) is t:
                return f'ember{ns}.{t.__name__}'
    return getattr(t, '__name__', repr(t))


def _struct(a):
    """A node argument with Nodes replaced by ('%', name) and containers made plain."""
    if isinstance(a, (torch.fx.Node, ember.fx.Node)):
        return ('%', a.name)
    if isinstance(a, (list, tuple)):
        return type(a).__mro__[-2](_struct(e) for e in a) if type(a) not in (list, tuple) else \
            type(a)(_struct(e) for e in a)
    if isinstance(a, dict):
        return {k: _struct(v) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(_struct(a.start), _struct(a.stop), _struct(a.step))
    if isinstance(a, torch.dtype):
        return str(a).replace('torch.', '')
    if isinstance(a, ember.dtype):
        return a.name
    return a


def node_list(gm):
    """(op, target, args) of every node, targets by their public name (torch. read as ember.)."""
    return [(n.op, _target_name(n.target), _struct(n.args)) for n in gm.graph.nodes]


def assert_same_nodes(eg, tg, kwargs='equal'):
    ours, theirs = node_list(eg), node_list(tg)
    assert len(ours) == len(theirs) > 2, (ours, theirs)
    assert ours == theirs
    for e, t in zip(eg.graph.nodes, tg.graph.nodes):
        ek, tk = _struct(dict(e.kwargs)), _struct(dict(t.kwargs))
        if kwargs == 'equal' or e.op != 'call_function':
            assert ek == tk, (e.name, ek, tk)
        else:       # a hand-written torch functional passes its defaults explicitly; ember passes what it got
            assert all(tk[k] == v for k, v in ek.items()), (e.name, ek, tk)


def normalized_code(gm):
    return gm.code.replace('torch.', 'ember.')


def copy_weights(tm, em):
    """torch module's parameters and buffers into the ember module with the same structure."""
    sd = {k: ember.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()}
    em.load_state_dict(sd)


def as_np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach().numpy())


def both(build):
    """``build(lib)`` for torch and ember, ember's weights copied from torch's."""
    tm, em = build(torch), build(ember)
    copy_weights(tm, em)
    return tm, em


# --- models, each written once for both libraries -------------------------------------------------------

def mlp(lib):
    nn, F = lib.nn, lib.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(8, 16)
            self.act = nn.ReLU()
            self.body = nn.Sequential(nn.Linear(16, 16), nn.Tanh())
            self.fc2 = nn.Linear(16, 4)

        def forward(self, x):
            x = lib.flatten(x, 1)
            x = self.act(self.fc1(x))
            x = self.body(x) + x
            return F.log_softmax(self.fc2(lib.relu(x)), dim=-1)
    return MLP()


def cnn(lib):
    nn = lib.nn

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(8)
            self.pool = nn.MaxPool2d(2)
            self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
            self.head = nn.Linear(8 * 4 * 4, 10)

        def forward(self, x):
            x = self.pool(lib.relu(self.bn1(self.conv1(x))))
            x = self.pool(self.conv2(x).relu())
            x = x.view(x.size(0), -1)
            return self.head(x)
    return CNN()


def methods(lib):
    class Methods(lib.nn.Module):
        def forward(self, x, y):
            a, b = x.chunk(2, dim=1)
            n, c = x.shape
            z = x.permute(1, 0).contiguous().transpose(0, 1)
            w = (a * b).mean(dim=1, keepdim=True).softmax(-1)
            u = x[:, None, :].squeeze(1) + y.T.T
            return z.reshape(n, c) - w + u.sum() / c, x.size(-1), lib.cat([a, b], dim=1)
    return Methods()


def attrs(lib):
    class Attrs(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = lib.nn.Parameter(lib.ones(4, 4))
            self.register_buffer('b', lib.zeros(4))
            self.scale = lib.full((4,), 2.0)         # a plain tensor attribute

        def forward(self, x):
            h = x @ self.w + self.b
            h = h * self.scale + self.w[0] + self.b
            return h[..., :2], h.dtype, 3 - h, 2 ** h[0], -h, abs(h) >= 1, ~(h > 0)
    return Attrs()


def control(lib):
    class Control(lib.nn.Module):
        def forward(self, x, mode='relu', scale=None, n=2):
            if mode == 'relu':
                x = lib.relu(x)
            else:
                x = lib.tanh(x)
            if scale is not None:
                x = x * scale
            for _ in range(n):
                x = x + 1
            return x
    return Control()


# --- tracing compared with torch.fx ----------------------------------------------------------------

@pytest.mark.parametrize('build, inputs', [
    (mlp, [(3, 2, 4)]), (cnn, [(2, 3, 16, 16)]), (methods, [(2, 4), (2, 4)]), (attrs, [(3, 4)]),
])
def test_trace_matches_torch(build, inputs):
    tm, em = both(build)
    tg, eg = torch.fx.symbolic_trace(tm), ember.fx.symbolic_trace(em)
    assert_same_nodes(eg, tg, kwargs='subset')
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in inputs]
    tm.eval(), em.eval(), tg.eval(), eg.eval()
    expect = tm(*[torch.from_numpy(a) for a in arrays])
    got = eg(*[ember.from_numpy(a) for a in arrays])
    expect, got = (expect, got) if isinstance(expect, tuple) else ((expect,), (got,))
    assert len(got) == len(expect)
    for g, t in zip(got, expect):
        if isinstance(t, torch.Tensor):
            np.testing.assert_allclose(as_np(g), as_np(t), rtol=1e-4, atol=1e-5)
        elif isinstance(t, torch.dtype):
            assert g.name == str(t).replace('torch.', '')
        else:
            assert g == t


@pytest.mark.parametrize('build', [mlp, cnn, methods, attrs])
def test_generated_code_matches_torch(build):
    tm, em = both(build)
    t_code = normalized_code(torch.fx.symbolic_trace(tm))
    e_code = normalized_code(ember.fx.symbolic_trace(em))
    assert e_code == t_code


def test_mlp_graph_printout_matches_torch():
    tm, em = both(mlp)
    expect = str(torch.fx.symbolic_trace(tm).graph).replace('torch.', 'ember.')
    assert str(ember.fx.symbolic_trace(em).graph) == expect


@pytest.mark.parametrize('concrete', [{'mode': 'relu', 'n': 2}, {'mode': 'tanh', 'scale': None, 'n': 1},
                                      {'n': 3, 'mode': 'relu'}, {'mode': 'tanh', 'scale': None, 'n': 0}])
def test_concrete_args_match_torch(concrete):
    tm, em = both(control)
    tg = torch.fx.symbolic_trace(tm, concrete_args=concrete)
    eg = ember.fx.symbolic_trace(em, concrete_args=concrete)
    assert normalized_code(eg) == normalized_code(tg)
    assert_same_nodes(eg, tg)
    x = np.linspace(-1, 1, 6, dtype=np.float32)
    args = [concrete['mode'], concrete.get('scale', 2.0), concrete['n']]     # positional: the inputs are renamed
    np.testing.assert_allclose(as_np(eg(ember.from_numpy(x), *args)), as_np(tg(torch.from_numpy(x), *args)))


def test_concrete_args_assert_the_specialized_value():
    _, em = both(control)
    eg = ember.fx.symbolic_trace(em, concrete_args={'mode': 'relu', 'n': 1})
    eg(ember.ones(2), 'relu', 2.0, 1)
    with pytest.raises(AssertionError, match='mode has been specialized to have value relu'):
        eg(ember.ones(2), 'tanh', 2.0, 1)


def test_tracing_a_function_and_wrap_and_autowrap():
    def f(x, y):
        return math.sqrt(2) * x + math.floor(y.sum()) + helper(x)

    def run(lib, fx):
        g = fx.symbolic_trace(f)
        return [(n.op, _target_name(n.target)) for n in g.graph.nodes], g.code.replace('torch.', 'ember.')
    assert run(ember, ember.fx) == run(torch, torch.fx)
    code = run(ember, ember.fx)[1]
    assert 'ember.fx._symbolic_trace.wrap("test_fx_helper")' in code and 'math_floor(' in code


def helper(x):
    return x * 2


torch.fx.wrap('helper')
ember.fx.wrap('helper')


def test_type_annotations_match_torch():
    import typing

    def build(lib):
        class M(lib.nn.Module):
            def forward(self, x: lib.Tensor, n: int = 2, sizes: typing.List[int] = None) -> lib.Tensor:
                return x * n
        return M()
    tg, eg = torch.fx.symbolic_trace(build(torch)), ember.fx.symbolic_trace(build(ember))
    assert normalized_code(eg) == normalized_code(tg)
    assert str(eg.graph) == str(tg.graph).replace('torch.', 'ember.')
    assert 'sizes : typing_List[int] = None) -> ember.Tensor:' in eg.code
    np.testing.assert_allclose(eg(ember.ones(2)).numpy(), [2.0, 2.0])


def test_annotate_matches_torch():
    codes = []
    import torch.fx.annotate
    for lib, fx in ((torch, torch.fx), (ember, ember.fx)):
        def f(x):
            y = fx.annotate.annotate(x + 1, lib.Tensor)
            return y * 2
        gm = fx.symbolic_trace(f)
        codes.append(normalized_code(gm))
        with pytest.raises(RuntimeError, match='already had a type'):
            fx.symbolic_trace(lambda x: fx.annotate.annotate(fx.annotate.annotate(x + 1, int), int))
    assert codes[0] == codes[1] and 'add : ember.Tensor = x + 1' in codes[1]


def test_autowrap_functions():
    def f(x):
        return helper_not_wrapped(x) + 1
    gm = ember.fx.GraphModule(ember.nn.Module(), ember.fx.Tracer(autowrap_functions=(helper_not_wrapped,)).trace(f))
    assert [n.target for n in gm.graph.nodes if n.op == 'call_function'] == [helper_not_wrapped, operator.add]
    plain = ember.fx.symbolic_trace(f)
    assert [n.target for n in plain.graph.nodes if n.op == 'call_function'] == [operator.mul, operator.add]
    np.testing.assert_allclose(gm(ember.ones(1)).numpy(), plain(ember.ones(1)).numpy())


def helper_not_wrapped(x):
    return x * 3


def test_wrapped_function_runs_in_the_generated_module():
    def f(x):
        return helper(x) + 1
    gm = ember.fx.symbolic_trace(f)
    assert [n.target for n in gm.graph.nodes if n.op == 'call_function'][0] is helper
    np.testing.assert_allclose(gm(ember.ones(2)).numpy(), [3.0, 3.0])


def test_data_dependent_control_flow_raises_trace_error():
    class M(ember.nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x
            return -x
    with pytest.raises(TraceError, match='symbolically traced variables cannot be used as inputs to control flow'):
        ember.fx.symbolic_trace(M())
    assert issubclass(TraceError, ValueError) and issubclass(torch.fx.proxy.TraceError, ValueError)


@pytest.mark.parametrize('body', ['for v in x: pass', 'list(x)', 'len(x)', 'f(*x)'])
def test_iteration_and_len_raise_as_torch(body):
    src = f'def forward(self, x):\n    f = print\n    {body}\n    return x\n'
    errors = []
    for lib, fx in ((torch, torch.fx), (ember, ember.fx)):
        ns = {}
        exec(src, ns)
        mod = type('M', (lib.nn.Module,), {'forward': ns['forward']})()
        with pytest.raises(Exception) as info:
            fx.symbolic_trace(mod)
        errors.append((type(info.value).__name__, str(info.value)))
    assert errors[0] == errors[1]


def test_leaf_modules_default_rule_and_custom_tracer():
    def build(lib):
        nn = lib.nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 4)

            def forward(self, x):
                return lib.relu(self.lin(x))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()
                self.seq = nn.Sequential(nn.Linear(4, 4), Block())

            def forward(self, x):
                return self.seq(self.block(x))
        return Net()

    def leaf_blocks(fx):
        class T(fx.Tracer):
            def is_leaf_module(self, m, qualname):
                return type(m).__name__ == 'Block' or super().is_leaf_module(m, qualname)
        return T
    tm, em = both(build)
    for tracer in (None, 'blocks'):
        tt = torch.fx.Tracer() if tracer is None else leaf_blocks(torch.fx)()
        et = ember.fx.Tracer() if tracer is None else leaf_blocks(ember.fx)()
        tgm = torch.fx.GraphModule(tm, tt.trace(tm))
        egm = ember.fx.GraphModule(em, et.trace(em))
        assert_same_nodes(egm, tgm)
        assert normalized_code(egm) == normalized_code(tgm)
    assert [n.target for n in egm.graph.nodes if n.op == 'call_module'] == ['block', 'seq.0', 'seq.1']


def test_custom_tracer_hooks_see_every_node():
    class Counting(ember.fx.Tracer):
        def __init__(self):
            super().__init__()
            self.seen, self.args_seen = [], []

        def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
            node = super().create_node(kind, target, args, kwargs, name, type_expr)
            self.seen.append(node.op)
            return node

        def create_arg(self, a):
            if isinstance(a, float):
                self.args_seen.append(a)
            return super().create_arg(a)

        def call_module(self, m, forward, args, kwargs):
            self.seen.append(f'module {type(m).__name__}')
            return super().call_module(m, forward, args, kwargs)

        def getattr(self, attr, attr_val, parameter_proxy_cache):
            self.seen.append(f'attr {attr}')
            return super().getattr(attr, attr_val, parameter_proxy_cache)

    class M(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = ember.nn.Linear(2, 2)
            self.p = ember.nn.Parameter(ember.ones(2))

        def forward(self, x):
            return self.lin(x) * 0.5 + self.p
    tr = Counting()
    tr.trace(M())
    assert tr.seen == ['placeholder', 'attr lin', 'module Linear', 'call_module', 'call_function', 'attr p',
                       'get_attr', 'call_function', 'output']
    assert tr.args_seen == [0.5]


def test_create_proxy_override_and_param_shapes_constant():
    class NoRelu(ember.fx.Tracer):
        def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
            if target is ember.relu:
                target = ember.sigmoid
            return super().create_proxy(kind, target, args, kwargs, name, type_expr, proxy_factory_fn)

    class M(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = ember.nn.Parameter(ember.ones(3, 2))

        def forward(self, x):
            return ember.relu(x @ self.w).reshape(self.w.shape[1], -1)
    g = NoRelu().trace(M())
    assert [n.target for n in g.nodes if n.op == 'call_function'][1] is ember.sigmoid
    g2 = ember.fx.Tracer(param_shapes_constant=True).trace(M())
    reshape = next(n for n in g2.nodes if n.target == 'reshape')
    assert reshape.args[1:] == (2, -1)      # the shape was read from the parameter, not traced
    g3 = ember.fx.Tracer().trace(M())
    assert isinstance(next(n for n in g3.nodes if n.target == 'reshape').args[1], ember.fx.Node)


def test_functional_and_hand_written_functions_record_themselves():
    F = ember.nn.functional

    def f(x, y):
        a = F.relu(x)                                     # hand-written nn.functional
        b = ember.where(x > 0, a, y)                        # hand-written ember._python_functions function
        c = F.linear(b, ember.ones(3, 3))                   # generated nn.functional operator
        d = ember.cat([a, c], dim=0)
        return ember.add(d, 1, alpha=2), ember.zeros(x.shape[0]), ember.max(d)
    gm = ember.fx.symbolic_trace(f)
    calls = [n.target for n in gm.graph.nodes if n.op == 'call_function']
    for fn in (F.relu, ember.where, F.linear, ember.cat, ember.add, ember.zeros, ember.max):
        assert fn in calls, fn
    add = next(n for n in gm.graph.nodes if n.target is ember.add)
    assert add.kwargs == {'alpha': 2}
    x, y = ember.randn(3, 3), ember.randn(3, 3)
    for g, e in zip(gm(x, y), f(x, y)):
        np.testing.assert_allclose(g.numpy(), e.numpy())


def test_generated_functions_record_their_arguments_like_torch():
    def f(lib):
        def fn(x):
            return (lib.sum(x, 1), lib.transpose(x, 0, 1), lib.clamp(x, 0), lib.add(x, 1, alpha=2),
                    lib.zeros(x.shape[0]), lib.softmax(x, -1), lib.mean(x, 0, True), lib.flatten(x))
        return fn
    tg, eg = torch.fx.symbolic_trace(f(torch)), ember.fx.symbolic_trace(f(ember))
    assert_same_nodes(eg, tg)


def test_generated_functions_record_schema_positional_arguments_positionally():
    # unlike torch, which records a call as written, an operator's entry point records its arguments by the
    # schema: positional parameters positionally (trailing defaults left out), keyword-only ones by keyword
    gm = ember.fx.symbolic_trace(lambda x: ember.clamp(x, min=0) + ember.sum(x, dim=1, keepdim=False, dtype=None))
    clamp, s = [n for n in gm.graph.nodes if n.op == 'call_function'][:2]
    assert (clamp.args[1:], clamp.kwargs, s.args[1:], s.kwargs) == ((0,), {}, (1,), {})


def test_transformer_keeps_wrapped_functions():
    gm = ember.fx.symbolic_trace(lambda x: helper(x) + 1)
    new = ember.fx.Transformer(gm).transform()
    assert [n.target for n in new.graph.nodes if n.op == 'call_function'] == [helper, operator.add]


def test_tensor_with_proxy_operand_records_a_call():
    c = ember.ones(3)

    def f(x):
        return c + x, c * x
    gm = ember.fx.symbolic_trace(f)
    assert [n.op for n in gm.graph.nodes] == ['placeholder', 'get_attr', 'call_function', 'get_attr',
                                               'call_function', 'output']
    np.testing.assert_allclose(gm(ember.full((3,), 2.0))[1].numpy(), [2.0, 2.0, 2.0])
    assert '_tensor_constant0' in dict(gm.named_buffers())


def test_vision_resnet_traces_and_runs():
    from ember.vision import models
    m = models.resnet18(num_classes=10).eval()
    gm = ember.fx.symbolic_trace(m).eval()
    x = ember.randn(1, 3, 32, 32)
    np.testing.assert_allclose(gm(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    ops = {n.op for n in gm.graph.nodes}
    assert ops == {'placeholder', 'call_module', 'call_function', 'output'}
    assert ember.flatten in [n.target for n in gm.graph.nodes]


def test_torch_fx_under_ember_run_alias():
    """``import torch.fx`` under ``ember run`` gives ember.fx (the alias reads the package lazily)."""
    import subprocess
    import sys
    import os
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = ('from ember import compat; compat.install(children=False)\n'
            'import torch, torch.fx\n'
            'gm = torch.fx.symbolic_trace(torch.nn.Linear(2, 2))\n'
            'import ember\n'
            'print(type(gm).__mro__[1] is ember.fx.GraphModule, type(gm).__module__, type(gm).__mro__[1].__module__,'
            ' torch.fx.Proxy is ember.fx.Proxy, torch.fx.Proxy.__module__)\n')
    r = subprocess.run([sys.executable, '-c', code], cwd=root, capture_output=True, text=True, timeout=120)
    # ember's classes, named as torch's (NOTE [torch's class names under ember run] in ember/compat.py)
    assert r.stdout.split() == ['True', 'torch.fx.graph_module', 'torch.fx.graph_module', 'True', 'torch.fx.proxy'], \
        r.stderr


def test_aliases_and_activation_modules_record_what_torch_records():
    """torch's aliases keep their own names in a graph, and activation modules call their functional form with
    the arguments torch's modules pass (F.relu(input, inplace=False), F.hardtanh(input, 0.0, 6.0, False))."""
    import torch
    import torch.fx

    def build(L):
        class M(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.acts = L.nn.ModuleList([L.nn.ReLU(), L.nn.ReLU6(), L.nn.SiLU(), L.nn.SELU(), L.nn.ELU(),
                                             L.nn.LeakyReLU(0.2), L.nn.Hardswish(), L.nn.Threshold(0.1, 0.0)])

            def forward(self, x):
                for a in self.acts:
                    x = a(x)
                return L.arctan(L.clip(L.multiply(x, 2), -1, 1))
        return M()

    class Flat(torch.fx.Tracer):
        def is_leaf_module(self, m, name):
            return False

    class EFlat(ember.fx.Tracer):
        def is_leaf_module(self, m, name):
            return False
    tg, eg = Flat().trace(build(torch)), EFlat().trace(build(ember))
    name = lambda n: {'_threshold': 'threshold'}.get(n.target.__name__, n.target.__name__) if callable(n.target) \
        else str(n.target)
    t = [(n.op, name(n), n.args[1:], n.kwargs) for n in tg.nodes]       # torch's F.threshold is _threshold inside
    e = [(n.op, name(n), n.args[1:], n.kwargs) for n in eg.nodes]
    assert e == t
