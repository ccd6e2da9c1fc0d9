"""ember.utils.flop_counter against torch.utils.flop_counter: the same programs counted by both, the counts
compared per module and per operator (keys by name), and the tables they print."""
import contextlib
import io

import numpy as np
import pytest
import tabulate
import torch
import torch.utils.flop_counter

import ember
import ember.utils.flop_counter
from ember.utils.flop_counter import FlopCounterMode, register_flop_formula, flop_registry

aten = ember.ops.aten


def _counts(counter):
    return {mod: {str(op): n for op, n in ops.items()} for mod, ops in counter.get_flop_counts().items()}


def _tensors(lib, shapes, grad):
    rng = np.random.default_rng(0)
    return [lib.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=grad) for s in shapes]


def _count(lib, fn, *args, **kwargs):
    with lib.utils.flop_counter.FlopCounterMode(display=False, **kwargs) as counter:
        fn(*args)
    return counter


def _both(build, step, **kwargs):
    """(ember's counter, torch's) for ``step(model)`` on ``build(lib)``, weights alike."""
    counters = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        model = build(lib)
        counters.append(_count(lib, step, model, **kwargs))
    return counters


def _module_totals(counter):
    return {mod: sum(ops.values()) for mod, ops in counter.get_flop_counts().items()}


# --- models, written once for both libraries ------------------------------------------------------------

def mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Sequential(nn.Linear(16, 16), nn.Tanh()), nn.Linear(16, 4))


def cnn(lib):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 6, 3, padding=1, stride=2)
            self.grouped = nn.Conv2d(6, 6, 3, groups=3, bias=False)
            self.up = nn.ConvTranspose2d(6, 4, 3, stride=2, output_padding=1)
            self.conv1d = nn.Conv1d(4, 5, 3, dilation=2)
            self.head = nn.Linear(5, 3)

        def forward(self, x):
            x = self.grouped(self.conv(x).relu())
            x = self.up(x)
            x = self.conv1d(x.flatten(2)).mean(-1)
            return self.head(x)
    return Net()


def transformer(lib, dropout=0.0):
    nn, F = lib.nn, lib.nn.functional

    class Attention(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.heads = heads
            self.qkv = nn.Linear(dim, 3 * dim)
            self.proj = nn.Linear(dim, dim)

        def forward(self, x):
            b, s, d = x.shape
            q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout, is_causal=True)
            return self.proj(y.transpose(1, 2).reshape(b, s, d))

    class Block(nn.Module):
        def __init__(self, dim=16, heads=2):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.attn = Attention(dim, heads)
            self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))
    return Block()


def _input(lib, shape, grad=False):
    return _tensors(lib, [shape], grad)[0]


def _lib_of(model):
    return torch if isinstance(model, torch.nn.Module) else ember


def fwd(shape, grad=False):
    return lambda model: model(_input(_lib_of(model), shape, grad))


def fwd_bwd(shape, grad=False):
    return lambda model: model(_input(_lib_of(model), shape, grad)).sum().backward()


# --- whole models: totals, modules and operators as torch's ----------------------------------------------

@pytest.mark.parametrize('step', [fwd((5, 8)), fwd_bwd((5, 8)), fwd_bwd((2, 5, 8), grad=True)],
                         ids=['forward', 'backward', 'backward-3d-input'])
def test_mlp(step):
    e, t = _both(mlp, step)
    assert _counts(e) == _counts(t)
    assert e.get_total_flops() == t.get_total_flops() > 0


@pytest.mark.parametrize('grad', [False, True])
def test_cnn_forward(grad):
    e, t = _both(cnn, fwd((2, 3, 16, 16), grad))
    assert _counts(e) == _counts(t)


@pytest.mark.parametrize('grad', [False, True])
def test_cnn_backward(grad):
    # torch's convolution backward is one convolution_backward; ember's is a transposed `convolution` (the
    # input's gradient, where the input needs one) and convolution_backward_weight: the same totals
    e, t = _both(cnn, fwd_bwd((2, 3, 16, 16), grad))
    assert e.get_total_flops() == t.get_total_flops()
    assert _module_totals(e) == _module_totals(t)
    rename = {'aten.convolution_backward_weight': 'aten.convolution_backward'}
    for mod, ops in _counts(t).items():
        mine = {}
        for op, n in _counts(e)[mod].items():
            mine[rename.get(op, op)] = mine.get(rename.get(op, op), 0) + n
        conv = ops.get('aten.convolution', 0) + ops.get('aten.convolution_backward', 0)
        assert mine.get('aten.convolution', 0) + mine.get('aten.convolution_backward', 0) == conv
        assert {k: v for k, v in mine.items() if 'conv' not in k} == {k: v for k, v in ops.items() if 'conv' not in k}


@pytest.mark.parametrize('step', [fwd((2, 6, 16)), fwd_bwd((2, 6, 16)), fwd_bwd((2, 6, 16), grad=True)],
                         ids=['forward', 'backward', 'backward-input-grad'])
@pytest.mark.parametrize('dropout', [0.0, 0.1], ids=['flash', 'math'])
def test_transformer_block(step, dropout):
    # without dropout both run the CPU flash kernel, which torch's registry does not count; with it, the math
    # path's batched products
    e, t = _both(lambda lib: transformer(lib, dropout), step)
    assert _counts(e) == _counts(t)


def test_sdpa_formulas_count_the_cpu_kernel_on_request():
    q, k, v = _tensors(ember, [(2, 4, 6, 8), (2, 2, 5, 8), (2, 2, 5, 8)], True)
    fc = ember.utils.flop_counter
    mapping = {aten._scaled_dot_product_flash_attention_for_cpu: fc.sdpa_flop.__wrapped__,
               aten._scaled_dot_product_flash_attention_for_cpu_backward: fc.sdpa_backward_flop.__wrapped__}
    counter = _count(ember, lambda: ember.nn.functional.scaled_dot_product_attention(
        q, k, v, enable_gqa=True).sum().backward(), custom_mapping=mapping)
    tfc = torch.utils.flop_counter
    shapes = [(2, 4, 6, 8), (2, 2, 5, 8), (2, 2, 5, 8)]
    assert _counts(counter) == {'Global': {
        'aten._scaled_dot_product_flash_attention_for_cpu': tfc.sdpa_flop_count(*shapes),
        'aten._scaled_dot_product_flash_attention_for_cpu_backward': tfc.sdpa_backward_flop_count(shapes[0], *shapes)}}


def test_gradients_unchanged():
    # the mode runs torch's composites of linear and matmul in place of ember's fused operators
    def run(counted):
        ember.manual_seed(0)
        model = transformer(ember)
        x = _input(ember, (2, 6, 16), True)
        with FlopCounterMode(display=False) if counted else contextlib.nullcontext():
            out = model(x)
            out.sum().backward()
        return [out, x.grad] + [p.grad for p in model.parameters()]
    for a, b in zip(run(True), run(False)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-5)


# --- single operators -----------------------------------------------------------------------------------

_MATMULS = [((3, 4), (4, 5)), ((4,), (4, 5)), ((4, 5), (5,)), ((4,), (4,)), ((2, 3, 4), (4, 5)),
            ((2, 3, 4), (4,)), ((4,), (2, 4, 5)), ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 6)),
            ((2, 3, 4, 5), (2, 3, 5, 6))]


def _op_counts(fn, shapes, grad, backward):
    out = []
    for lib in (ember, torch):
        ts = _tensors(lib, shapes, grad)

        def run():
            y = fn(lib, *ts)
            if backward:
                y.sum().backward()
        out.append(_counts(_count(lib, run)))
    return out


@pytest.mark.parametrize('grad,backward', [(False, False), (True, False), (True, True)])
@pytest.mark.parametrize('shapes', _MATMULS, ids=str)
def test_matmul(shapes, grad, backward):
    e, t = _op_counts(lambda lib, a, b: lib.matmul(a, b), shapes, grad, backward)
    assert e == t


_PRODUCTS = {
    'mm': (lambda lib, a, b: lib.mm(a, b), [(3, 4), (4, 5)]),
    'bmm': (lambda lib, a, b: lib.bmm(a, b), [(2, 3, 4), (2, 4, 5)]),
    'addmm': (lambda lib, c, a, b: lib.addmm(c, a, b), [(5,), (3, 4), (4, 5)]),
    'baddbmm': (lambda lib, c, a, b: lib.baddbmm(c, a, b), [(5,), (2, 3, 4), (2, 4, 5)]),
    'linear-1d': (lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), [(4,), (5, 4), (5,)]),
    'linear-3d-no-bias': (lambda lib, x, w: lib.nn.functional.linear(x, w), [(2, 3, 4), (5, 4)]),
    'linear-4d': (lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), [(2, 2, 3, 4), (5, 4), (5,)]),
    'tensordot': (lambda lib, a, b: lib.tensordot(a, b, dims=([1, 2], [0, 1])), [(2, 3, 4), (3, 4, 5)]),
    'multi_dot': (lambda lib, a, b, c: lib.linalg.multi_dot([a, b, c]), [(2, 3), (3, 4), (4, 5)]),
    'inner': (lambda lib, a, b: lib.inner(a, b), [(3, 4), (5, 4)]),
    'conv2d': (lambda lib, x, w: lib.nn.functional.conv2d(x, w, stride=2, padding=1), [(2, 3, 9, 9), (4, 3, 3, 3)]),
    'conv_transpose1d': (lambda lib, x, w: lib.nn.functional.conv_transpose1d(x, w, stride=3), [(2, 3, 7), (3, 2, 4)]),
}


@pytest.mark.parametrize('grad,backward', [(False, False), (True, True)])
@pytest.mark.parametrize('name', list(_PRODUCTS))
def test_products(name, grad, backward):
    fn, shapes = _PRODUCTS[name]
    e, t = _op_counts(fn, shapes, grad, backward)
    if backward and 'conv' in name:     # see test_cnn_backward
        total = lambda c: sum(sum(ops.values()) for ops in c.values())
        assert total(e) == total(t)
    else:
        assert e == t


_EINSUMS = [('ij,jk->ik', [(3, 4), (4, 5)]), ('bij,bjk->bik', [(2, 3, 4), (2, 4, 5)]),
            ('bhqd,bhkd->bhqk', [(2, 3, 4, 5), (2, 3, 6, 5)]), ('ij,jk', [(3, 4), (4, 5)]),
            ('...ij,...jk->...ik', [(2, 3, 4), (2, 4, 5)]), ('bij,jk->bik', [(2, 3, 4), (4, 5)]),
            ('ijk,jkl->il', [(2, 3, 4), (3, 4, 5)]), ('i,i->', [(4,), (4,)]), ('i,j->ij', [(3,), (4,)]),
            ('ij,ij->i', [(3, 4), (3, 4)]), ('ab,cd->', [(2, 3), (4, 5)]), ('ij->ji', [(3, 4)]),
            ('ij,jk,kl->il', [(2, 3), (3, 4), (4, 5)])]


@pytest.mark.parametrize('equation,shapes', _EINSUMS, ids=[e for e, _ in _EINSUMS])
def test_einsum_forward(equation, shapes):
    e, t = _op_counts(lambda lib, *ts: lib.einsum(equation, *ts), shapes, False, False)
    assert e == t


@pytest.mark.parametrize('equation,shapes', _EINSUMS[:7], ids=[e for e, _ in _EINSUMS[:7]])
def test_einsum_backward(equation, shapes):
    # where every pair of operands contracts a label and keeps one of each side's; otherwise ember's einsum
    # gradients (einsums themselves) contract differently from the bmm gradients of torch's composite
    e, t = _op_counts(lambda lib, *ts: lib.einsum(equation, *ts), shapes, True, True)
    assert e == t


# --- the counter ----------------------------------------------------------------------------------------

def test_modules_are_named_as_torch():
    e, t = _both(mlp, fwd_bwd((5, 8)))
    assert sorted(e.get_flop_counts()) == sorted(t.get_flop_counts()) == [
        'Global', 'Sequential', 'Sequential.0', 'Sequential.2', 'Sequential.2.0', 'Sequential.3']


def test_backward_ends_in_global():
    # after a backward that never reaches the model's input, the modules are left (torch's engine callback)
    counters = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        model = mlp(lib)
        a, b = _tensors(lib, [(3, 4), (4, 5)], False)

        def run():
            model(_input(lib, (5, 8))).sum().backward()
            lib.mm(a, b)
        counters.append(_counts(_count(lib, run)))
    assert counters[0] == counters[1]
    assert counters[0]['Global']['aten.mm'] - counters[0]['Sequential']['aten.mm'] == 3 * 4 * 5 * 2


def test_queue_callback():
    with pytest.raises(RuntimeError, match='during backward pass'):
        ember.autograd.Variable._execution_engine.queue_callback(lambda: None)
    log = []
    x = ember.ones(2, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: ember.autograd.Variable._execution_engine.queue_callback(
        lambda: log.append(x.grad is not None)))
    y.sum().backward()
    assert log == [True]


def test_mods_is_ignored_with_a_warning():
    model = mlp(ember)
    with pytest.warns(UserWarning, match='mods argument is not needed'):
        counter = FlopCounterMode(model, display=False)
    with counter:
        model(_input(ember, (5, 8)))
    assert counter.get_total_flops() == _count(ember, lambda: model(_input(ember, (5, 8)))).get_total_flops()


def test_custom_mapping():
    def relu_flop(x_shape, *args, out_shape=None, **kwargs):
        return int(np.prod(x_shape))

    def raw_mm(a, b, *args, out_val=None, **kwargs):
        assert isinstance(a, ember.Tensor) and isinstance(out_val, ember.Tensor)
        return 1
    raw_mm._get_raw = True
    model = mlp(ember)
    counter = _count(ember, lambda: model(_input(ember, (5, 8))),
                     custom_mapping={aten.relu: relu_flop, aten.addmm: lambda *a, **k: 7})
    assert _counts(counter)['Global'] == {'aten.addmm': 21, 'aten.relu': 5 * 16}
    a, b = _tensors(ember, [(3, 4), (4, 5)], False)
    assert _count(ember, lambda: ember.mm(a, b), custom_mapping={aten.mm: raw_mm}).get_total_flops() == 1
    # linear is torch's composite: the mode sees its addmm (NOTE [modes see torch's composites]), so a formula
    # given for linear counts nothing, under torch too
    counts = [_counts(_count(L, lambda L=L, m=m: m(_input(L, (5, 8))),
                             custom_mapping={L.ops.aten.linear: lambda *a, **k: 1}))['Global']
              for L, m in ((ember, model), (torch, mlp(torch)))]
    assert counts[0] == counts[1] == {'aten.addmm': 2 * 5 * (8 * 16 + 16 * 16 + 16 * 4)}


def test_register_flop_formula():
    @register_flop_formula(aten.mv)
    def mv_flop(a_shape, b_shape, *args, out_shape=None, **kwargs):
        assert tuple(out_shape) == (a_shape[0],)
        return 2 * a_shape[0] * a_shape[1]
    try:
        a, b = _tensors(ember, [(3, 4), (4,)], False)
        assert _counts(_count(ember, lambda: ember.mv(a, b))) == {'Global': {'aten.mv': 24}}
        with pytest.raises(RuntimeError, match='duplicate registrations'):
            register_flop_formula(aten.mv)(mv_flop)
        with pytest.raises(ValueError, match='OpOverloadPacket'):
            register_flop_formula(aten.mv.default)(mv_flop)
    finally:
        flop_registry.pop(aten.mv)
    assert _count(ember, lambda: ember.mv(a, b)).get_total_flops() == 0


def test_registry_covers_torchs_operators_ember_has():
    torch_names = {str(k) for k in torch.utils.flop_counter.flop_registry if hasattr(k, '_qualified_op_name')}
    ember_names = {str(k) for k in flop_registry}
    have = {n for n in torch_names if hasattr(aten, n.split('.')[1])}
    assert have <= ember_names
    assert have >= {'aten.mm', 'aten.addmm', 'aten.bmm', 'aten.baddbmm', 'aten.convolution'}


# --- the table ------------------------------------------------------------------------------------------

def _torch_table(counter, depth):
    # torch's table through tabulate keeping leading spaces (torch asks for that with tabulate's old global
    # PRESERVE_WHITESPACE, which tabulate 0.10 no longer reads)
    real = tabulate.tabulate
    tabulate.tabulate = lambda *a, **k: real(*a, preserve_whitespace=True, **k)
    try:
        return counter.get_table(depth)
    finally:
        tabulate.tabulate = real


@pytest.mark.parametrize('build,step', [(mlp, fwd_bwd((5, 8))), (mlp, fwd((300, 8))), (transformer, fwd_bwd((2, 6, 16))),
                                        (mlp, lambda model: None)],
                         ids=['mlp', 'mlp-thousands', 'transformer', 'empty'])
@pytest.mark.parametrize('depth', [1, 2, None])
def test_table(build, step, depth):
    e, t = _both(build, step)
    assert e.get_table(depth) == _torch_table(t, depth)


def test_table_with_global_row():
    tables = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        model = mlp(lib)
        a, b = _tensors(lib, [(30, 40), (40, 50)], False)
        tables.append(_torch_table(_count(lib, lambda: (model(_input(lib, (5, 8))), lib.mm(a, b))), 2)
                      if lib is torch else _count(lib, lambda: (model(_input(lib, (5, 8))), lib.mm(a, b))).get_table())
    assert tables[0] == tables[1]
    assert tables[0].splitlines()[2].startswith('Global')


def test_display_prints_torchs_rows():
    printed = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        model = transformer(lib)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            with lib.utils.flop_counter.FlopCounterMode(depth=3):
                model(_input(lib, (2, 6, 16))).sum().backward()
        lines = out.getvalue().strip().splitlines()
        printed.append([line.split() for line in lines[:1] + lines[2:]])    # widths differ: see _torch_table
    assert printed[0] == printed[1]
    assert len(printed[0]) > 10
