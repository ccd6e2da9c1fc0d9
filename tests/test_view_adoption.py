"""Views made while their base had no history, and the write that gives the base some (NOTE [view history] in
ember/autograd/views.py): torch asks every view at each use whether its base changed; ember's base remembers
its views and gives them history at that write. Compared with torch: gradients, node names, requires_grad and
the errors for views that may not be regenerated."""
import gc
import warnings

import pytest
import torch

import ember
from test_view_creation_modes import observe


def _sibling_view(lib):
    w = lib.tensor([1., 2., 3.], requires_grad=True)
    base = lib.zeros(2, 3)
    v1, v2 = base[0], base[1]
    v2.copy_(w * 2)                 # the base gains history through another view
    props = (v1.requires_grad, v1.grad_fn, v1.is_leaf, v2.grad_fn)
    (base.sum() + (v1 * 4).sum() + (v2 * 3).sum()).backward()
    return props, w.grad


def _column_of_rows(lib):
    w = lib.tensor([1., 2., 3.], requires_grad=True)
    base = lib.zeros(2, 3)
    col = base[:, 1]                # crosses the row written below
    base[1] = w
    (col * 3).sum().backward()
    return col.grad_fn, w.grad


def _base_written_in_place(lib):
    w = lib.tensor([1., 2., 3.], requires_grad=True)
    base = lib.ones(3)
    v = base[:2]
    base.mul_(w)
    (v * lib.tensor([5., 7.])).sum().backward()
    return v.grad_fn, w.grad


def _view_of_view(lib):
    w = lib.tensor([1., 2., 3.], requires_grad=True)
    base = lib.zeros(4, 3)
    v = base[1:]
    vv = v[0]                       # base's row 1
    v.t()[:, 1] = w                 # base's row 2, through a view of a view
    (vv * 2 + v[1] * 3).sum().backward()
    return vv.grad_fn, vv.is_leaf, w.grad


def _double_backward(lib):
    w = lib.tensor([1., 2., 3.], requires_grad=True)
    base = lib.zeros(3)
    v = base[:2]
    base.copy_(w ** 2)
    g, = lib.autograd.grad(v.sum(), w, create_graph=True)
    g2, = lib.autograd.grad(g.sum(), w)
    return g, g2


def _complex_parts(lib):
    w = lib.tensor([1., 2., 3.], requires_grad=True)
    base = lib.zeros(3, dtype=lib.complex64)
    re, im = base.real, base.imag
    base.copy_(w.to(lib.complex64) * (1 + 2j))
    ((im * 3).sum() + re.sum()).backward()
    return im.grad_fn, re.grad_fn, w.grad


class _AddInPlace:
    @staticmethod
    def make(lib):
        class AddInPlace(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.mark_dirty(x)
                return x.add_(y)

            @staticmethod
            def backward(ctx, g):
                return g, g
        return AddInPlace


def _custom_function_dirty(lib):
    w = lib.tensor([1., 2., 3.], requires_grad=True)
    base = lib.zeros(3)
    v = base[1:]
    _AddInPlace.make(lib).apply(base, w)
    (v * 5).sum().backward()
    return v.grad_fn, w.grad


def _no_grad_view(lib):
    w = lib.tensor([1., 2., 3.], requires_grad=True)
    base = lib.zeros(2, 3)
    with lib.no_grad():
        v = base[0]
    base[1] = w
    return v.requires_grad, observe(lambda: v * 2)


def _unbind_piece(lib):
    w = lib.tensor([1., 2., 3.], requires_grad=True)
    base = lib.zeros(2, 3)
    _, b = base.unbind(0)
    base[1] = w
    return b.requires_grad, observe(lambda: b * 2)


def _untouched_base(lib):
    base = lib.zeros(2, 3)
    v = base[0]
    base.add_(1)                    # no history: the view has none either
    return v.requires_grad, v.grad_fn, v.is_leaf, v * 2


@pytest.mark.parametrize('scenario', [_sibling_view, _column_of_rows, _base_written_in_place, _view_of_view,
                                      _double_backward, _complex_parts, _custom_function_dirty, _no_grad_view,
                                      _unbind_piece, _untouched_base])
def test_views_made_before_the_base_gained_history_match_torch(scenario):
    with warnings.catch_warnings():
        warnings.simplefilter('error')          # no cast warning from a complex gradient of a real input either
        expected = observe(lambda: scenario(torch))
        got = observe(lambda: scenario(ember))
    assert got == expected


def test_a_base_viewed_many_times_keeps_a_short_list():
    data = ember.arange(10_000.)
    for i in range(5_000):
        batch = data[i:i + 16]          # a dataset's batches: each view dies before the next
    del batch
    assert len(data._views) < 200
    keep = [data[i:i + 1] for i in range(300)]
    for _ in range(1000):
        data[0:1]
    assert sum(r() is not None for r in data._views) == 300 and len(data._views) < 1300
    del keep
    gc.collect()


def test_the_base_forgets_its_views_once_it_has_history():
    w = ember.ones(3, requires_grad=True)
    base = ember.zeros(3)
    v = base[:2]
    base.mul_(w)
    assert base._views is None and v.grad_fn is not None
    assert base[1:]._base is base and base._views is None    # views made now have history of their own
