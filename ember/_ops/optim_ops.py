"""torch's fused optimizer steps: ``_fused_adam_`` and ``_fused_adamw_``, one operator for a whole list of
parameters (``torch.optim.Adam(..., fused=True)``).

NOTE [fused optimizer steps] -- Adam's update of one parameter is about eight operators (lerp_, mul_, addcmul_,
sqrt, div, add_, addcdiv_, and the weight decay): on the CPU each costs ember's dispatch (a few us) on top of a
NumPy pass, and on a GPU each is a kernel launch after ember's dispatch (~40 us together, NOTE [device choices]
in ember/_backends/cuda/_choices.py, BENCHMARKS.md's CUDA run 6). The fused operator is dispatched once per
step for all the parameters; its kernel (_backends/cpu/optim.py) runs the single-tensor update's own NumPy
operations, in the same order, on each parameter's arrays in place, so on the CPU it gives the single-tensor
update's bits, and the CUDA backend runs its twin. As in torch: the arguments are written in place without
bumping version counters (torch's fused kernels don't), half-precision parameters are updated in float32 and
rounded once, ``grad_scale`` unscales the gradients (written back) and a nonzero ``found_inf`` skips the
step. The optimizers use it for ``fused=True`` and by default on a CUDA device and for plain float32/float64
CPU tensors (NOTE [foreach] in optim/optimizer.py).
"""
from .registry import declare


def _fused_adam_meta(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2,
                     weight_decay, eps, amsgrad, maximize, grad_scale=None, found_inf=None):
    n = len(self)
    for name, ts in (('grads', grads), ('exp_avgs', exp_avgs), ('exp_avg_sqs', exp_avg_sqs),
                     ('state_steps', state_steps)) + ((('max_exp_avg_sqs', max_exp_avg_sqs),) if amsgrad else ()):
        if len(ts) != n:
            raise RuntimeError(f"Expected {name}.size() == n_tensors to be true, but got false.  (Could this error "
                               f"message be improved?  If so, please report an enhancement request to PyTorch.)")
    for i, p in enumerate(self):
        if not p.dtype.is_floating_point:
            raise RuntimeError(f"`fused=True` requires all the params to be floating point Tensors of supported "
                               f"devices but {p.dtype} and {p.device.type}")
        for name, ts in (('grads', grads), ('exp_avgs', exp_avgs), ('exp_avg_sqs', exp_avg_sqs)) + \
                ((('max_exp_avg_sqs', max_exp_avg_sqs),) if amsgrad else ()):
            t = ts[i]
            if tuple(t.shape) != tuple(p.shape) or t.dtype != p.dtype:
                raise RuntimeError(f"{name}[{i}] must match its parameter: expected shape {tuple(p.shape)} and "
                                   f"dtype {p.dtype}, got {tuple(t.shape)} and {t.dtype}")
    return []


_SCHEMA = ('(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] exp_avgs, Tensor(d!)[] exp_avg_sqs, '
           'Tensor(e!)[] max_exp_avg_sqs, Tensor[] state_steps, *, float lr, float beta1, float beta2, '
           'float weight_decay, float eps, bool amsgrad, bool maximize, Tensor? grad_scale=None, '
           'Tensor? found_inf=None) -> ()')

for _name in ('_fused_adam_', '_fused_adamw_'):
    declare(_name + _SCHEMA, meta=_fused_adam_meta, method=False, differentiable=False)
