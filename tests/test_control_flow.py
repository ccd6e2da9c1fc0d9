"""torch.cond and torch.while_loop run eagerly (NOTE [control-flow operators] in ember/_higher_order_ops)."""
import pytest
import torch

import ember


def _pair(seed=0):
    torch.manual_seed(seed)
    x = torch.randn(3)
    return x, ember.tensor(x.numpy())


@pytest.mark.parametrize('pred', ['tensor_true', 'tensor_false', True, False, 1, 0])
def test_cond_takes_the_branch_torch_takes(pred):
    x, ex = _pair()
    p = {'tensor_true': (torch.tensor(True), ember.tensor(True)),
         'tensor_false': (torch.tensor([False]), ember.tensor([False]))}.get(pred, (pred, pred))
    want = torch.cond(p[0], lambda a, b: a.sin() + b, lambda a, b: a.cos() - b, (x, x * 2))
    got = ember.cond(p[1], lambda a, b: a.sin() + b, lambda a, b: a.cos() - b, (ex, ex * 2))
    assert torch.allclose(torch.from_numpy(got.numpy()), want)


def test_cond_gradients_flow_through_the_branch_taken():
    x, ex = _pair(1)
    x.requires_grad_()
    ex.requires_grad_()
    torch.cond(x.sum() > -10, lambda a: (a * a).sum(), lambda a: a.sum(), (x,)).backward()
    ember.cond(ex.sum() > -10, lambda a: (a * a).sum(), lambda a: a.sum(), (ex,)).backward()
    assert torch.allclose(torch.from_numpy(ex.grad.numpy()), x.grad)


def test_cond_predicate_errors_as_torch():
    x, ex = _pair()
    with pytest.raises(RuntimeError) as want:
        torch.cond(torch.tensor([True, False]), lambda a: a, lambda a: a, (x,))
    with pytest.raises(RuntimeError) as got:
        ember.cond(ember.tensor([True, False]), lambda a: a, lambda a: a, (ex,))
    assert str(got.value) == str(want.value)


def test_cond_with_a_tensor_predicate_takes_only_tensor_operands():
    x, ex = _pair()
    with pytest.raises(RuntimeError) as want:
        torch.cond(torch.tensor(True), lambda a, b: a, lambda a, b: a, (x, 2.0))
    with pytest.raises(RuntimeError) as got:
        ember.cond(ember.tensor(True), lambda a, b: a, lambda a, b: a, (ex, 2.0))
    assert str(got.value).split(', but got')[0] == str(want.value).split(', but got')[0]
    assert ember.cond(True, lambda a, b: a + b, lambda a, b: a, (ex, 2.0)).shape == (3,)     # a bool: anything goes


def test_while_loop_matches_torch():
    x, ex = _pair(2)
    want = torch.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, a * 2 + 1), (torch.tensor(0), x))
    got = ember.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, a * 2 + 1), (ember.tensor(0), ex))
    assert isinstance(got, tuple) and int(got[0]) == int(want[0]) == 4
    assert torch.allclose(torch.from_numpy(got[1].numpy()), want[1])


def test_while_loop_rejects_a_body_that_changes_a_shape():
    with pytest.raises(RuntimeError, match="shape and dtype"):
        ember.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a[:2]), (ember.tensor(0), ember.zeros(3)))
    with pytest.raises(RuntimeError, match="same number"):
        ember.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1,), (ember.tensor(0), ember.zeros(3)))


def test_module_paths_resolve_as_torch():
    from ember._higher_order_ops.cond import cond
    from ember._higher_order_ops.while_loop import while_loop
    assert cond is ember.cond and while_loop is ember.while_loop


# --- cond in a trace: both branches as subgraphs (NOTE [control-flow operators]) ------------------------------

def _traced_cond(lib, mode):
    from importlib import import_module
    make_fx = import_module(f'{lib.__name__}.fx.experimental.proxy_tensor').make_fx

    def f(x):
        return lib.cond(x.sum() > 0, lambda a: (a * 2).sin(), lambda a: a - 1, (x,)) + 1
    return make_fx(f, tracing_mode=mode)(lib.randn(3))


@pytest.mark.parametrize('mode', ['real', 'fake'])
def test_make_fx_records_cond_with_both_branches_as_torch(mode):
    e, t = _traced_cond(ember, mode), _traced_cond(torch, mode)
    for part in ('', '.true_graph_0', '.false_graph_0'):
        code = lambda gm: eval('gm' + part).code
        assert code(e) == code(t).replace('torch.', 'ember.')
    for x in ([1., 2., 3.], [-1., -2., 0.5]):
        assert e(ember.tensor(x)).tolist() == pytest.approx(t(torch.tensor(x)).tolist(), rel=1e-6)
    node = next(n for n in e.graph.nodes if n.op == 'call_function' and str(n.target) == 'cond')
    assert node.target is ember.ops.higher_order.cond


def test_traced_cond_checks_its_branches():
    from ember.fx.experimental.proxy_tensor import make_fx
    with pytest.raises(RuntimeError, match="expected same dim but got 1 and 0"):
        make_fx(lambda x: ember.cond(x.sum() > 0, lambda a: a * 2, lambda a: a.sum(), (x,)),
                tracing_mode='fake')(ember.randn(3))
    with pytest.raises(RuntimeError, match="aliasing"):
        make_fx(lambda x: ember.cond(x.sum() > 0, lambda a: a, lambda a: a * 2, (x,)),
                tracing_mode='fake')(ember.randn(3))


def test_cond_compiles_as_one_graph_without_gradients():
    def f(x):
        return ember.cond(x.sum() > 0, lambda a: (a * 2).sin(), lambda a: a - 1, (x,)) + 1
    compiled = ember.compile(f, fullgraph=True)
    with ember.no_grad():
        for x in (ember.ones(3), -ember.ones(3)):
            assert compiled(x).tolist() == f(x).tolist()
    x = ember.ones(3, requires_grad=True)       # with a gradient through it, the predicate is read, as eagerly:
    with pytest.raises(ember._dynamo.exc.Unsupported, match='data-dependent'):     # no single graph
        compiled(x)
    ember.compile(f)(x).sum().backward()
    assert x.grad.tolist() == pytest.approx((2 * ember.cos(ember.full((3,), 2.0))).tolist(), rel=1e-6)
