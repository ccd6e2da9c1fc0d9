"""Printing tensors in torch's format: ``tensor([1.5000, 2.0000])``."""
import numpy as np


def tensor_repr(t):
    suffix = []
    if t._device.type != 'cpu':
        suffix.append(f"device='{t._device}'")
    if t._device.type == 'meta':
        body = '...'
        suffix.insert(0, f'size={tuple(t._a.shape)}')
    else:
        body = np.array2string(np.asarray(t._host()), separator=', ', prefix='tensor(')
    if t._dtype.name not in ('float32', 'int64', 'bool') or t._device.type == 'meta':
        suffix.append(f'dtype={t._dtype}')
    if t._grad_fn is not None:
        suffix.append(f'grad_fn=<{t._grad_fn.name()}>')
    elif t._requires_grad:
        suffix.append('requires_grad=True')
    return 'tensor(' + body + ''.join(', ' + s for s in suffix) + ')'
