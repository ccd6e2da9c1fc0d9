"""API a pytorch/tutorials run found missing, compared with torch in the same process: functorch's control_flow
(cond, map) and torch._higher_order_ops.map, torch.compiler.set_stance and list_backends, _dynamo.explain's graphs
around a break, autograd.graph's GradientEdge / get_gradient_edge / allow_mutation_on_saved_tensors, and the
public names the tutorials import (export.default_decompositions, register_dataclass, library.impl_abstract,
func.replace_all_batch_norm_modules_, ao.quantization.QuantType)."""
import dataclasses
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import ember


def _np(t):
    return t.detach().numpy()


# --- map and functorch.experimental.control_flow --------------------------------------------------------------
def test_map_values_and_gradients_as_torch():
    from torch._higher_order_ops.map import map as tmap
    from ember._higher_order_ops.map import map as emap
    rng = np.random.default_rng(0)
    xv, yv = rng.standard_normal((4, 3)).astype('float32'), rng.standard_normal(3).astype('float32')
    outs, grads = [], []
    for lib, m in ((torch, tmap), (ember, emap)):
        x, y = lib.tensor(xv, requires_grad=True), lib.tensor(yv, requires_grad=True)
        r, rs = m(lambda a, b: ((a['k'] * b).sin(), [a['k'] + 1]), {'k': x}, y)
        (r.sum() + 2 * rs[0].sum()).backward()
        outs.append((r, rs[0]))
        grads.append((x.grad, y.grad))
    np.testing.assert_allclose(_np(outs[0][0]), _np(outs[1][0]), rtol=1e-6)
    np.testing.assert_allclose(_np(outs[0][1]), _np(outs[1][1]), rtol=1e-6)
    assert outs[1][0].shape == ember.Size([4, 3])
    np.testing.assert_allclose(_np(grads[0][0]), _np(grads[1][0]), rtol=1e-5)
    # (y's gradient sums four terms in another order: a sum that cancels to ~1e-3 differs in its last bits)
    np.testing.assert_allclose(_np(grads[0][1]), _np(grads[1][1]), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('case', ['empty', 'inconsistent', 'non_tensor', 'scalar_xs'])
def test_map_errors_as_torch(case):
    from torch._higher_order_ops.map import map as tmap
    from ember._higher_order_ops.map import map as emap

    def run(lib, m):
        xs = {'empty': lambda: lib.ones(0, 2), 'inconsistent': lambda: [lib.ones(2, 2), lib.ones(3)],
              'non_tensor': lambda: [lib.ones(2, 2), 3], 'scalar_xs': lambda: lib.ones(())}[case]()
        with pytest.raises(Exception) as info:
            m(lambda a: a + 1 if not isinstance(a, list) else a[0] + 1, xs)
        return info
    t, e = run(torch, tmap), run(ember, emap)
    assert type(t.value) is type(e.value)
    assert str(t.value).split('Got')[0].replace('torch', 'ember') == str(e.value).split('Got')[0]


def test_higher_order_ops_map_is_the_function():
    import ember._higher_order_ops as h
    assert callable(h.map) and h.map.__name__ == 'map'
    assert ember.ops.higher_order.map_impl(lambda a, b: a * b, [ember.ones(2, 3)], [ember.full((3,), 2.)]).sum() == 12


def test_functorch_control_flow_under_ember_run(tmp_path):
    script = tmp_path / 'cf.py'
    script.write_text(textwrap.dedent('''
        import torch
        import torch._higher_order_ops as hop
        from torch._higher_order_ops.map import map as m2
        from functorch.experimental.control_flow import cond, map as cf_map
        from functorch.experimental import replace_all_batch_norm_modules_
        print(cond(torch.tensor(True), lambda x: x.sin(), lambda x: x.cos(), (torch.zeros(2),)).tolist(),
              cf_map(lambda x, y: x + y, torch.ones(3, 2), torch.ones(2)).tolist(), hop.map is m2)
    '''))
    expected = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    got = subprocess.run([sys.executable, '-m', 'ember', 'run', str(script)], capture_output=True, text=True)
    assert expected.returncode == 0, expected.stderr
    assert got.returncode == 0, got.stderr
    assert got.stdout == expected.stdout == '[0.0, 0.0] [[2.0, 2.0], [2.0, 2.0], [2.0, 2.0]] True\n'


# --- set_stance, list_backends -----------------------------------------------------------------------------------
def _stance_story(lib):
    """What the compiled callables do under each stance: backend calls counted, errors' classes."""
    log, cnt = [], [0]

    def be(gm, ex):
        cnt[0] += 1
        return gm

    h = lib.compile(lambda x: x.cos(), backend=be)
    h(lib.randn(2))
    log.append(cnt[0])
    with lib.compiler.set_stance('eager_on_recompile'):
        h(lib.randn(2))
        h(lib.randn(2, dtype=lib.float64))
        log.append(cnt[0])
    h(lib.randn(2, dtype=lib.float64))
    log.append(cnt[0])
    with lib.compiler.set_stance('force_eager'):
        log.append(float(h(lib.zeros(3, dtype=lib.float16))[0]))
        log.append(cnt[0])

    @lib.compiler.set_stance('force_eager')
    def k():
        h(lib.ones(5).int())
    k()
    log.append(cnt[0])
    with lib.compiler.set_stance('fail_on_recompile'):
        h(lib.randn(2))
        with pytest.raises(RuntimeError, match="Detected recompile when torch.compile stance is 'fail_on_recompile'"):
            h(lib.ones(7).int())
    log.append(cnt[0])
    cnt2 = [0]

    def be2(gm, ex):
        cnt2[0] += 1
        return gm
    with lib.compiler.set_stance(force_backend=be2):
        h(lib.randn(2))
    log.append((cnt[0], cnt2[0]))
    with lib.compiler.set_stance('eager_then_compile'):
        z = lib.compile(lambda x: x + 1, backend=be)
        z(lib.ones(2))
        log.append(cnt[0])
        z(lib.ones(2))
        log.append(cnt[0])
    with lib.compiler.set_stance('default', skip_guard_eval_unsafe=True):
        h(lib.randn(2))
    log.append(cnt[0])
    with pytest.raises(RuntimeError, match='non-default stance cannot have force_backend set'):
        lib.compiler.set_stance('force_eager', force_backend='eager')
    lib.compiler.set_stance('bogus')
    try:
        with pytest.raises(RuntimeError, match='invalid torch.compile stance'):
            lib.compile(lambda x: x + 2, backend=be)(lib.ones(1))
    finally:
        lib.compiler.set_stance('default')
    return log


def test_set_stance_as_torch():
    assert _stance_story(torch) == _stance_story(ember) == [1, 1, 2, 1.0, 2, 2, 2, (2, 1), 2, 3, 3]


def test_set_stance_inside_compiled_region_raises():
    def q(x):
        ember.compiler.set_stance('force_eager')
        return x + 1
    with pytest.raises(AssertionError, match='forbidden callable'):
        ember.compile(q, backend='eager')(ember.ones(2))
    assert ember._dynamo.stance.current().stance == 'default'


def test_list_backends_as_torch():
    assert ember.compiler.list_backends() == ['inductor'] and 'inductor' in torch.compiler.list_backends()
    assert ember._dynamo.list_backends() == ember.compiler.list_backends()
    assert {'eager', 'aot_eager', 'inductor'} <= set(ember.compiler.list_backends(exclude_tags=()))
    assert {'eager', 'aot_eager', 'inductor'} <= set(torch.compiler.list_backends(exclude_tags=()))


# --- explain -------------------------------------------------------------------------------------------------------
def _bar(lib):
    def bar(a, b):
        x = a / (lib.abs(a) + 1)
        if b.sum() < 0:
            b = b * -1
        return x * b
    return bar


@pytest.mark.parametrize('sign', [1.0, -1.0])
def test_explain_graphs_around_a_break_as_torch(sign):
    t = torch._dynamo.explain(_bar(torch))(torch.randn(10), sign * torch.ones(10))
    e = ember._dynamo.explain(_bar(ember))(ember.randn(10), sign * ember.ones(10))
    assert (e.graph_count, e.graph_break_count) == (t.graph_count, t.graph_break_count) == (2, 1)
    assert len(e.graphs) == 2 and len(e.break_reasons) == 1
    # the second graph multiplies once more when the branch was taken, as torch's
    assert len(e.ops_per_graph[1]) == len(t.ops_per_graph[1])
    assert 'data-dependent' in e.break_reasons[0]


def test_explain_without_break_as_torch():
    t = torch._dynamo.explain(lambda a: a.sin())(torch.randn(3))
    e = ember._dynamo.explain(lambda a: a.sin())(ember.randn(3))
    assert (e.graph_count, e.graph_break_count) == (t.graph_count, t.graph_break_count) == (1, 0)


# --- autograd.graph ----------------------------------------------------------------------------------------------
def test_gradient_edge_as_torch():
    res = []
    for lib in (torch, ember):
        from_graph = lib.autograd.graph
        x = lib.tensor([1., 2.], requires_grad=True)
        y = x * 2
        z = (y ** 2).sum()
        e = from_graph.get_gradient_edge(y)
        a, b = x.unbind()
        res.append((e.node is y.grad_fn, e.output_nr, type(e).__name__, e._fields,
                    from_graph.get_gradient_edge(b).output_nr,
                    from_graph.get_gradient_edge(x).node is from_graph.get_gradient_edge(x).node,
                    lib.autograd.grad(z, e, retain_graph=True)[0].tolist(),
                    [g.tolist() for g in lib.autograd.grad(z, [from_graph.get_gradient_edge(x), y])]))
        with pytest.raises(RuntimeError, match='not possible to get the gradient edge for a Tensor that does not'):
            from_graph.get_gradient_edge(lib.ones(2))
    assert res[0] == res[1]


def test_allow_mutation_on_saved_tensors_as_torch():
    out = []
    for lib in (torch, ember):
        a = lib.tensor([0.5, 2.0], requires_grad=True)
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            b = a.clone()
            loss = (b ** 3).sum()
            b.sin_()
            loss.backward()
            with pytest.raises(RuntimeError, match='cannot be nested'):
                with lib.autograd.graph.allow_mutation_on_saved_tensors():
                    pass
        out.append(a.grad.tolist())
        b = a.clone()           # outside the context the version check stands
        loss = (b ** 3).sum()
        b.sin_()
        with pytest.raises(RuntimeError, match='modified by an inplace operation'):
            loss.backward()
    assert out[0] == out[1] == [0.75, 12.0]


# --- names ---------------------------------------------------------------------------------------------------------
def test_replace_all_batch_norm_modules_as_torch():
    res = []
    for lib in (torch, ember):
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3), lib.nn.BatchNorm1d(3, affine=False))
        assert lib.func.replace_all_batch_norm_modules_(m) is m
        res.append([(c.running_mean, c.running_var, c.num_batches_tracked, c.track_running_stats) for c in m[1:]])
    assert res[0] == res[1] == [(None, None, None, False)] * 2


def test_quant_type_as_torch():
    from torch.ao.quantization import QuantType as T
    from ember.ao.quantization import QuantType as E
    assert [(q.name, q.value) for q in T] == [(q.name, q.value) for q in E]
    assert issubclass(E, int) and repr(E.QAT) == repr(T.QAT)


def test_register_dataclass_as_torch():
    for lib in (torch, ember):
        @dataclasses.dataclass
        class Pair:
            a: object
            b: object = None
        lib.export.register_dataclass(Pair)
        leaves, spec = lib.utils._pytree.tree_flatten(Pair(lib.ones(1), None))
        assert len(leaves) == 1
        back = lib.utils._pytree.tree_unflatten([lib.zeros(1)], spec)
        assert isinstance(back, Pair) and back.b is None

        class NotData:
            pass
        with pytest.raises(ValueError, match='field_names must be specified'):
            lib.export.register_dataclass(NotData)


def test_default_decompositions_feed_run_decompositions():
    class M(ember.nn.Module):
        def forward(self, x):
            return ember.nn.functional.linear(x, ember.ones(2, 3)).relu()
    ep = ember.export.export(M(), (ember.randn(4, 3),))
    table = ember.export.default_decompositions()
    assert ember.ops.aten.linear.default in table
    ops_default = [str(n.target) for n in ep.run_decompositions().graph.nodes if n.op == 'call_function']
    ops_table = [str(n.target) for n in ep.run_decompositions(table).graph.nodes if n.op == 'call_function']
    assert ops_default == ops_table and not any('linear' in o for o in ops_table)


def test_impl_abstract_registers_the_fake_kernel():
    with ember.library._scoped_library('gaps21', 'FRAGMENT') if hasattr(ember.library, '_scoped_library') \
            else ember.library.Library('gaps21', 'DEF') as lib:
        lib.define('twice(Tensor x) -> Tensor')
        lib.impl('twice', lambda x: x * 2, 'CPU')
        ember.library.impl_abstract('gaps21::twice', lambda x: ember.empty_like(x), lib=lib)
        out = ember.ops.gaps21.twice(ember.ones(3, device='meta'))
        assert out.device.type == 'meta' and out.shape == ember.Size([3])
