"""What an operator saves for backward decides where the version counter check fires (NOTE [version counter]).

For every differentiable operator of the OpInfo records, and each of its samples, modify the output in place
after the call (and, separately, each floating input) and run backward: ember must raise exactly where
torch raises ("one of the variables needed for gradient computation has been modified by an inplace
operation"), and succeed where torch succeeds. Inputs are non-leaf clones so that in-place writes to them
are legal in both libraries. matmul and einsum, whose saved tensors depend on their operands' layouts and on which
of them require grad, are also checked across those.
"""
import numpy as np
import pytest
import torch

import ember
from opinfo import OPS
from _harness import materialize, to_lib, call, flat


# a floating input that torch declares non-differentiable (total_weight) cannot require grad, and this test
# makes every floating input require grad; their gradients are tested in test_nn_loss.py (fake quantization's
# scale, in test_quantization.py)
NOT_ALL_DIFFERENTIABLE = {'nll_loss_backward', 'nll_loss2d_backward', 'fake_quantize_per_channel_affine'}


def _cases():
    for name, info in sorted(OPS.items()):
        if info.grad and 'float64' in info.grad_dtypes and not info.random and name not in NOT_ALL_DIFFERENTIABLE:
            yield pytest.param(info, id=name)


def _is_t(x):
    return isinstance(x, (torch.Tensor, ember.Tensor))


def _attempt(info, lib, args, kwargs, target):
    """Call the op on non-leaf inputs, write in place into ``target`` ('out', or the index of an input
    tensor), run backward. Returns 'ok', 'inplace-error' (the write itself was refused), 'backward-error'
    (the version check fired), 'stale-view-error' or 'other-error: ...'."""
    targs = to_lib(args, lib, requires_grad=True)
    tkw = to_lib(kwargs, lib, requires_grad=True)
    ins = [x for x in flat(targs) + flat(list(tkw.values())) if _is_t(x) and x.requires_grad]
    clones = {id(x): x.clone() for x in ins}

    def swap(x):
        if isinstance(x, list):
            return [swap(y) for y in x]
        if isinstance(x, tuple):
            return tuple(swap(y) for y in x)
        return clones.get(id(x), x) if _is_t(x) else x
    cargs, ckw = swap(targs), {k: swap(v) for k, v in tkw.items()}
    outs = [o for o in flat(call(info, lib, cargs, ckw)) if _is_t(o) and o.requires_grad]
    if not outs:
        return None
    victims = outs if target == 'out' else [clones[id(ins[target])]]
    try:
        for v in victims:
            v.mul_(1)
    except RuntimeError:
        return 'inplace-error'
    try:
        sum(o.sum() for o in outs).backward()
    except RuntimeError as e:
        if 'modified by an inplace operation' in str(e):
            return 'backward-error'
        if 'its base or another view of its base has been modified inplace' in str(e):
            return 'stale-view-error'        # a piece of split/chunk/unbind after its base was written
        return 'other-error: ' + str(e)[:200]
    return 'ok'


# Known differences (none at present): an operator whose saved tensors ember does not yet reproduce is listed here with
# the reason, as a strict xfail, so the mark fails once it is fixed.
KNOWN = {}


def _marked(cases):
    for c in cases:
        info = c.values[0]
        yield pytest.param(info, id=c.id, marks=pytest.mark.xfail(reason=KNOWN[info.name], strict=True)) \
            if info.name in KNOWN else c


@pytest.mark.parametrize('info', list(_marked(_cases())))
def test_version_check_fires_where_torch_fires(info):
    checked = no_derivative = 0
    for i, s in enumerate(info.samples('float64')):
        args, kwargs = materialize(s, 'float64', seed=i)
        try:
            n_in = len([x for x in flat(to_lib(args, torch, True)) + flat(list(to_lib(kwargs, torch, True).values()))
                        if _is_t(x) and x.requires_grad])
            if _attempt(info, torch, args, kwargs, 'out') is None:
                continue
        except (RuntimeError, IndexError, ValueError, TypeError):
            continue        # an error sample: test_ops checks it
        for target in ['out'] + list(range(n_in)):
            t = _attempt(info, torch, args, kwargs, target)
            if t.startswith('other-error'):
                no_derivative += 1      # e.g. torch has no double backward here: not a version-counter question
                continue
            e = _attempt(info, ember, args, kwargs, target)
            assert e == t, f'{info.name}({s}): in-place write to {target}: torch {t}, ember {e}'
            checked += 1
    assert checked or no_derivative, f'{info.name}: no sample reached backward'


# matmul folds a batch or expands one for bmm, copying where a reshape cannot view (NOTE [matmul's graph] in
# ember/_ops/products.py): whether a copy is saved depends on the layouts and on which operand requires grad, which
# the OpInfo samples above (contiguous, every input requiring grad) do not vary
_MM_SHAPES = [(3,), (2, 3), (2, 2, 3), (1, 2, 3), (2, 3, 4), (1, 3, 4), (2, 1, 2, 3), (3, 3, 2), (2, 2, 3, 2), (3, 1)]


def _layout_operand(lib, a, requires_grad, layout):
    t = lib.from_numpy(a.copy()).requires_grad_(requires_grad).clone()
    if layout == 'mT' and t.dim() >= 2:      # the last two dimensions transposed in memory
        t = t.mT.contiguous().mT
    if layout == 'batch' and t.dim() >= 3:   # the first two
        t = t.transpose(0, 1).contiguous().transpose(0, 1)
    return t


def _mm_attempt(lib, a, b, grads, layouts, target):
    x, y = (_layout_operand(lib, m, g, l) for m, g, l in zip((a, b), grads, layouts))
    out = lib.matmul(x, y)
    {'out': out, 0: x, 1: y}[target].mul_(1)
    try:
        out.sum().backward()
    except RuntimeError as e:
        assert 'modified by an inplace operation' in str(e), e
        return 'backward-error'
    return 'ok'


@pytest.mark.parametrize('grads', [(True, True), (True, False), (False, True)], ids=str)
def test_matmul_saves_what_torch_saves_across_layouts(grads):
    import itertools
    rng = np.random.default_rng(0)
    checked = 0
    for sa, sb in itertools.product(_MM_SHAPES, repeat=2):
        if len(sa) <= 2 and len(sb) <= 2:
            continue        # dot, mv, mm: the operands themselves, whatever their layout
        a, b = rng.standard_normal(sa), rng.standard_normal(sb)
        try:
            torch.matmul(torch.from_numpy(a), torch.from_numpy(b))
        except RuntimeError:
            continue
        for layouts in itertools.product(('contiguous', 'mT', 'batch'), repeat=2):
            for target in ('out', 0, 1):
                t = _mm_attempt(torch, a, b, grads, layouts, target)
                e = _mm_attempt(ember, a, b, grads, layouts, target)
                assert e == t, f'{sa} @ {sb}, requires_grad {grads}, {layouts}: write to {target}: torch {t}, ember {e}'
                checked += 1
    assert checked


# einsum keeps its fused node where torch's graph saves a view of every operand, and builds torch's graph elsewhere
# (ember/_ops/products.py); which one depends on the operands' layouts and on which of them require grad
_EINSUM_CASES = [('bij,bjk->bik', [(2, 2, 3), (2, 3, 4)]), ('...ij,...jk->...ik', [(2, 2, 3), (5, 1, 3, 4)]),
                 ('b...i,b...i->b...', [(2, 3, 4), (2, 1, 4)]), ('...i,i->...', [(2, 3), (3,)]),
                 ('...i,...i->i', [(2, 3), (4, 2, 3)]), ('ii,i->i', [(3, 3), (3,)]), ('iij,jk->ik', [(2, 2, 3), (3, 2)]),
                 ('bhqd,bhkd->bhqk', [(2, 3, 4, 5), (2, 3, 6, 5)]), ('ij,ij->', [(3, 4), (3, 4)]),
                 ('i,j,k->ijk', [(2,), (3,), (2,)]), ('ab,bc,cd->ad', [(2, 3), (3, 4), (4, 2)]), ('ij,jk->ki', [(2, 3), (3, 4)]),
                 ('ij,kj->', [(1, 3), (2, 3)]), ('abc,cb->a', [(2, 3, 4), (4, 3)])]


def _einsum_attempt(lib, eq, arrays, grads, layouts, target):
    ts = [_layout_operand(lib, a, g, l) for a, g, l in zip(arrays, grads, layouts)]
    out = lib.einsum(eq, *ts)
    (out if target == 'out' else ts[target]).mul_(1)
    try:
        out.sum().backward()
    except RuntimeError as e:
        assert 'modified by an inplace operation' in str(e), e
        return 'backward-error'
    return 'ok'


@pytest.mark.parametrize('eq,shapes', _EINSUM_CASES, ids=[c[0] for c in _EINSUM_CASES])
def test_einsum_saves_what_torch_saves_across_layouts(eq, shapes):
    import itertools
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    checked = 0
    for grads in itertools.product((True, False), repeat=len(shapes)):
        if not any(grads):
            continue
        for layouts in itertools.product(('contiguous', 'mT'), repeat=len(shapes)):
            for target in ['out'] + list(range(len(shapes))):
                t = _einsum_attempt(torch, eq, arrays, grads, layouts, target)
                e = _einsum_attempt(ember, eq, arrays, grads, layouts, target)
                assert e == t, f'{eq} {shapes}, requires_grad {grads}, {layouts}: write to {target}: torch {t}, ember {e}'
                checked += 1
    assert checked


def test_linear_saves_what_addmm_saves():
    """torch's linear (addmm) saves the input only for the weight's gradient and the weight only for the input's:
    a weight changed in place before the backward of an input that needs no gradient is fine (a GAN's step
    order), and raises where the input needs its gradient."""
    for lib in (torch, ember):
        lib.manual_seed(0)
        lin = lib.nn.Linear(4, 2)
        loss = lin(lib.randn(3, 4)).sum()
        with lib.no_grad():
            lin.weight.add_(1.0)
        loss.backward()
        assert lin.weight.grad.shape == (2, 4)
        x = lib.randn(3, 4, requires_grad=True)
        loss = lin(x).sum()
        with lib.no_grad():
            lin.weight.add_(1.0)
        with pytest.raises(RuntimeError, match='modified by an inplace operation'):
            loss.backward()
        x = lib.randn(3, 4, requires_grad=True)       # the weight frozen: only the weight is saved
        lin.requires_grad_(False)
        loss = lin(x).sum()
        x.data.add_(1.0)
        loss.backward()
        assert x.grad is not None
        lin.requires_grad_(True)
