"""OpInfo records for the fused losses (ember/_ops/losses.py) and the nn.functional losses built on them.

The operator records keep to shape and dtype errors, which the meta functions raise; targets out of
bounds are data, checked by the CPU kernels, so those samples live in the nn.functional records, which
run without the Meta comparison. Weights are floating tensors, so the generic gradient tests make them
require grad, which torch refuses for these ops: weighted gradients are checked in tests/test_nn_loss.py.
"""
import numpy as np

from .core import op, S, Arg

_F = 'nn.functional.'
_I64 = np.int64


def _t(*v):
    return np.array(v, dtype=_I64)


def _w(c):
    return Arg((c,), low=0.1, high=2)


def _nll_forward_samples(dt):
    t = _t(0, 3, 1, 1, 2)
    for red in (0, 1, 2):
        yield S(Arg((5, 4)), t, None, red, -100)
        yield S(Arg((5, 4)), t, _w(4), red, -100)
        yield S(Arg((5, 4)), _t(0, -100, 3, -100, 2), _w(4), red, -100)      # ignored samples
        yield S(Arg((5, 4)), t, None, red, 1)                                 # ignore_index a real class
        yield S(Arg((4,)), np.array(2, _I64), None, red, -100)                # unbatched
        yield S(Arg((4,)), _t(3), _w(4), red, -100)                           # unbatched, 1-element target
        yield S(Arg((0, 4)), np.zeros(0, _I64), None, red, -100)              # empty batch
    yield S(Arg((4, 5), noncontig=True), _t(4, 0, 2, 4), _w(5), 1, -100)
    yield S(Arg((5, 4)), _t(-100, -100, -100, -100, -100), None, 1, -100)  # all ignored: 0/0
    yield S(Arg((5, 4)), _t(0, 3, 1, 1, 2).astype(np.uint8), None, 1, -100)
    yield S(Arg((3, 0)), _t(-100, -100, -100), None, 2, -100)              # no classes, all ignored
    # errors (shapes and dtypes, raised by the meta function)
    yield S(Arg((2, 3, 4)), _t(0, 1), None, 1, -100)
    yield S(Arg((5, 4)), np.zeros((5, 1), _I64), None, 1, -100)
    yield S(Arg((5, 4)), t.astype(np.int32), None, 1, -100)
    yield S(Arg((5, 4)), t.astype(dt), None, 1, -100)
    yield S(Arg((4,)), _t(1, 2), None, 1, -100)
    yield S(Arg((5, 4)), _t(0, 1), None, 1, -100)
    yield S(Arg((5, 4)), np.array(1, _I64), None, 1, -100)
    yield S(Arg((5, 4)), t, _w(3), 1, -100)
    yield S(Arg((5, 4)), t, Arg((2, 2)), 1, -100)
    yield S(Arg((5, 4)), t, Arg((4,), dtype='float64' if dt == 'float32' else 'float32'), 1, -100)


def _nll_backward_samples(dt):
    t, tw = _t(0, 3, 1, 1, 2), np.array(3.5, dt)
    for red in (1, 2):
        yield S(Arg(()), Arg((5, 4)), t, None, red, -100, tw)
        yield S(Arg(()), Arg((5, 4)), _t(0, -100, 3, -100, 2), _w(4), red, -100, tw)
        yield S(Arg(()), Arg((4,)), np.array(2, _I64), _w(4), red, -100, tw)
        yield S(Arg((1,)), Arg((5, 4)), t, None, red, 1, tw)
    yield S(Arg((5,)), Arg((5, 4)), t, None, 0, -100, tw)
    yield S(Arg((5,)), Arg((5, 4)), _t(0, -100, 3, -100, 2), _w(4), 0, -100, tw)
    yield S(Arg(()), Arg((4,)), np.array(-100, _I64), None, 0, -100, tw)
    yield S(Arg((0,)), Arg((0, 4)), np.zeros(0, _I64), None, 0, -100, tw)
    yield S(Arg(()), Arg((5, 4)), t.astype(np.uint8), None, 1, -100, np.array(5.0, dt))
    # errors
    yield S(Arg((4,)), Arg((5, 4)), t, None, 0, -100, tw)                   # grad_output of the wrong size
    yield S(Arg((5,)), Arg((5, 4)), t, None, 1, -100, tw)                   # mean wants one element
    yield S(Arg(()), Arg((5, 4)), t, None, 1, -100, np.ones(2, dt))
    yield S(Arg(()), Arg((5, 4)), t, _w(3), 1, -100, tw)
    yield S(Arg(()), Arg((4,)), _t(2), None, 1, -100, tw)                   # the backward wants a 0-d target
    yield S(Arg(()), Arg((5, 4)), t.astype(np.int32), None, 1, -100, tw)
    yield S(Arg(()), Arg((5, 4)), _t(0, 1), None, 1, -100, tw)


def _nll2d_forward_samples(dt):
    t = np.array([[[0, 2], [1, 1], [2, 0]], [[1, 0], [2, 2], [0, 1]]], _I64)        # (2, 3, 2)
    ign = t.copy()
    ign[0, 1, 0] = ign[1, 2, 1] = -100
    for red in (0, 1, 2):
        yield S(Arg((2, 3, 3, 2)), t, None, red, -100)
        yield S(Arg((2, 3, 3, 2)), ign, _w(3), red, -100)
        yield S(Arg((2, 3, 3, 2)), t, None, red, 2)
        yield S(Arg((0, 3, 3, 2)), np.zeros((0, 3, 2), _I64), None, red, -100)
    yield S(Arg((2, 3, 3, 2)), t, Arg((3, 1)), 1, -100)                         # weight: only its size counts
    yield S(Arg((2, 3, 3, 2)), np.full((2, 3, 2), -100, _I64), None, 1, -100)
    # errors
    yield S(Arg((2, 3, 3, 2)), t[0], None, 1, -100)
    yield S(Arg((3, 3, 2)), t, None, 1, -100)
    yield S(Arg((2, 3, 3, 2)), t[:, :2], None, 1, -100)
    yield S(Arg((2, 3, 3, 2)), t, _w(2), 1, -100)
    yield S(Arg((2, 3, 3, 2)), t.astype(np.int32), None, 1, -100)


def _nll2d_backward_samples(dt):
    t = np.array([[[0, 2], [1, 1], [2, 0]], [[1, 0], [2, -100], [0, 1]]], _I64)
    tw = np.array(4.0, dt)
    yield S(Arg(()), Arg((2, 3, 3, 2)), t, None, 1, -100, tw)
    yield S(Arg(()), Arg((2, 3, 3, 2)), t, _w(3), 2, -100, tw)
    yield S(Arg((2, 3, 2)), Arg((2, 3, 3, 2)), t, _w(3), 0, -100, tw)
    yield S(Arg((2, 3, 2)), Arg((2, 3, 3, 2)), np.where(t < 0, 2, t), None, 0, 1, tw)
    # errors
    yield S(Arg((2, 3)), Arg((2, 3, 3, 2)), t, None, 0, -100, tw)
    yield S(Arg((2, 2, 3)), Arg((2, 3, 3, 2)), t, None, 0, -100, tw)
    yield S(Arg((2,)), Arg((2, 3, 3, 2)), t, None, 1, -100, tw)
    yield S(Arg(()), Arg((2, 3, 3, 2)), t, None, 1, -100, np.ones(3, dt))


op('nll_loss_forward', _nll_forward_samples, torch_name='ops.aten.nll_loss_forward')
op('nll_loss_backward', _nll_backward_samples, torch_name='ops.aten.nll_loss_backward')
op('nll_loss2d_forward', _nll2d_forward_samples, torch_name='ops.aten.nll_loss2d_forward')
op('nll_loss2d_backward', _nll2d_backward_samples, torch_name='ops.aten.nll_loss2d_backward')


# --- the functional losses: rank dispatch, K-dim inputs, target values --------------------------

def _nll_loss_samples(dt):
    for red in ('none', 'mean', 'sum'):
        yield S(Arg((5, 4)), _t(0, 3, -100, 1, 2), reduction=red)
        yield S(Arg((4,)), np.array(1, _I64), reduction=red)
        yield S(Arg((2, 4, 3)), np.array([[0, 3, 1], [2, -100, 0]], _I64), reduction=red)          # 3-D: viewed 4-D
        yield S(Arg((2, 3, 2, 2)), np.array([[[0, 2], [1, 1]], [[2, 0], [1, 0]]], _I64), reduction=red)
        yield S(Arg((2, 3, 2, 1, 2)), np.array([[[[0, 2]], [[1, 1]]], [[[2, 0]], [[1, 0]]]], _I64),
                reduction=red, ignore_index=1)
        yield S(Arg((0, 3, 2)), np.zeros((0, 2), _I64), reduction=red)
    yield S(Arg((2, 4, 3)), np.array([[0, 3, 1], [2, 2, 0]], _I64), _w(4))
    yield S(Arg((4,)), _t(1))                                 # forward only: torch's backward rejects it
    # errors
    yield S(Arg((5, 4)), _t(0, 3, 4, 1, 2))                   # out of bounds
    yield S(Arg((5, 4)), _t(0, 3, -1, 1, 2), reduction='none')
    yield S(Arg((2, 3, 2, 2)), np.full((2, 2, 2), 7, _I64))
    yield S(Arg((2, 4, 3)), np.array([[0, 3, 1], [2, -7, 0]], _I64))
    yield S(Arg((5, 4)), _t(0, 3, -100, 1, 2), ignore_index=2)   # -100 is a target like any other here
    yield S(Arg(()), np.array(0, _I64))
    yield S(Arg((5, 4)), _t(0, 3))
    yield S(Arg((2, 4, 3)), np.zeros((2, 2), _I64))
    yield S(Arg((2, 3, 2, 2)), np.zeros((2, 3, 2), _I64))
    yield S(Arg((2, 3, 2, 2)), np.zeros((2, 4), _I64))
    yield S(Arg((5, 4)), _t(0, 3, 1, 1, 2), reduction='avg')


def _cross_entropy_samples(dt):
    for red in ('none', 'mean', 'sum'):
        yield S(Arg((5, 4)), _t(0, 3, -100, 1, 2), reduction=red)
        yield S(Arg((5, 4)), _t(0, 3, 2, 1, 2), _w(4), reduction=red, ignore_index=2)
        yield S(Arg((4,)), np.array(1, _I64), reduction=red)
        yield S(Arg((2, 4, 3)), np.array([[0, 3, 1], [2, -100, 0]], _I64), reduction=red)
        yield S(Arg((2, 3, 2, 2)), np.array([[[0, 2], [1, 1]], [[2, 0], [1, 0]]], _I64), reduction=red,
                label_smoothing=0.2)
        yield S(Arg((5, 4)), _t(0, 3, -100, 1, 2), _w(4), reduction=red, label_smoothing=0.1)
        yield S(Arg((3, 4)), Arg((3, 4), low=0, high=1), reduction=red)            # class probabilities
        yield S(Arg((0, 4)), np.zeros(0, _I64), reduction=red)
    yield S(Arg((3, 4)), Arg((3, 4), low=0, high=1), label_smoothing=0.3)
    yield S(Arg((3, 4)), _t(0, 1, 2), label_smoothing=-0.1)                         # torch ignores it
    # errors
    yield S(Arg((5, 4)), _t(0, 3, 4, 1, 2))
    yield S(Arg((5, 4)), _t(0, 3, 4, 1, 2), label_smoothing=0.1)
    yield S(Arg((3, 4)), _t(0, 1, 2), label_smoothing=1.5)
    yield S(Arg((3, 4)), np.zeros((3, 4), _I64))                                    # same shape, not floating
    yield S(Arg((3, 4)), Arg((3, 4), low=0, high=1), ignore_index=1)
    yield S(Arg((3, 4)), Arg((3, 4), low=0, high=1), _w(3))
    yield S(Arg((3, 4)), Arg((3, 5), low=0, high=1))
    yield S(Arg((5, 4)), _t(0, 3, 2, 1, 2).astype(np.int32))


op(_F + 'nll_loss', _nll_loss_samples, torch_name=_F + 'nll_loss', meta=False)
op(_F + 'cross_entropy', _cross_entropy_samples, torch_name=_F + 'cross_entropy', meta=False, atol=1e-5, rtol=1e-5)


def _bce_samples(dt):
    for red in (0, 1, 2):
        yield S(Arg((3, 4), low=0.05, high=0.95), Arg((3, 4), low=0, high=1), None, red)
    yield S(Arg((), low=0.1, high=0.9), Arg((), low=0, high=1), None, 1)
    yield S(Arg((0, 3), low=0.1, high=0.9), Arg((0, 3), low=0, high=1), None, 1)
    yield S(Arg((4, 3), noncontig=True, low=0.1, high=0.9), Arg((4, 3), low=0, high=1), None, 0)
    yield S(np.array([0.0, 1.0, 0.5]).astype(dt), np.array([1.0, 0.0, 0.5]).astype(dt), None, 1)  # clamped logs
    yield S(Arg((3, 4), low=0.1, high=0.9), Arg((2, 4), low=0, high=1), None, 1)                   # shape error


op('binary_cross_entropy', _bce_samples, torch_name='ops.aten.binary_cross_entropy')


def _bce_logits_samples(dt):
    for red in (0, 1, 2):
        yield S(Arg((3, 4)), Arg((3, 4), low=0, high=1), None, None, red)
    yield S(Arg((3, 4)), Arg((3, 4), low=0, high=1), Arg((4,), low=0.5, high=2), Arg((4,), low=0.5, high=3), 1)
    yield S(Arg((3, 4)), Arg((3, 4), low=0, high=1), None, Arg((3, 1), low=0.5, high=3), 0)
    yield S(Arg((3, 4)), Arg((3, 4), low=0, high=1), Arg((3, 4), low=0.5, high=2), None, 2)
    yield S(Arg(()), Arg((), low=0, high=1), None, None, 1)
    yield S(Arg((0, 3)), Arg((0, 3), low=0, high=1), None, None, 1)
    yield S(Arg((4, 3), noncontig=True), Arg((4, 3), low=0, high=1), None, None, 0)
    yield S(Arg((3, 4)), np.zeros((3, 4), np.int64), None, None, 1)     # error: the in-place multiply refuses it


op('binary_cross_entropy_with_logits', _bce_logits_samples, torch_name='ops.aten.binary_cross_entropy_with_logits',
   atol=1e-5, rtol=1e-5)


def _mse_samples(dt):
    for red in (0, 1, 2):
        yield S(Arg((3, 4)), Arg((3, 4)), red)
    yield S(Arg(()), Arg(()), 1)
    yield S(Arg((0, 3)), Arg((0, 3)), 1)
    yield S(Arg((4, 3), noncontig=True), Arg((4, 3)), 0)
    yield S(Arg((3, 4)), Arg((4,)), 0)          # broadcasts, as torch's operator


def _mse_backward_samples(dt):
    for red in (1, 2):
        yield S(Arg(()), Arg((3, 4)), Arg((3, 4)), red)
    yield S(Arg((3, 4)), Arg((3, 4)), Arg((3, 4)), 0)
    yield S(Arg(()), Arg((0, 3)), Arg((0, 3)), 1)


op('mse_loss', _mse_samples, torch_name='ops.aten.mse_loss')
op('mse_loss_backward', _mse_backward_samples, torch_name='ops.aten.mse_loss_backward')
