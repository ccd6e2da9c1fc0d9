"""ember.autograd.functional: Jacobians, Hessians and products with them (torch.autograd.functional).

A Jacobian is one backward per output element (reverse mode over ``autograd.grad``), or with
``strategy='forward-mode', vectorize=True`` one forward-mode jvp per input element (autograd.forward_ad), as
torch offers; ``hessian(..., outer_jacobian_strategy='forward-mode')`` is forward-over-reverse; ``jvp`` and ``hvp`` use the double-backward trick (the
gradient of a vector-Jacobian product with respect to the vector is the
Jacobian-vector product). ``vectorize=True`` is accepted and computes the same
result row by row.

>>> import ember
>>> from ember.autograd.functional import jacobian
>>> jacobian(lambda x: x * x, ember.tensor([1., 2.]))
tensor([[2., 0.],
        [0., 4.]])
"""
import numpy as np

from .._core.tensor_impl import TensorImpl
from .grad_mode import enable_grad


def _grad(*args, **kwargs):
    from . import grad
    return grad(*args, **kwargs)


def _as_tuple(x, arg_name='inputs', fn_name='jacobian'):
    is_tuple = isinstance(x, (tuple, list))
    xs = tuple(x) if is_tuple else (x,)
    for i, t in enumerate(xs):
        if not isinstance(t, TensorImpl):
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"the value at index {i} has type {type(t)}.")
    return is_tuple, xs


def _prep(inputs, create_graph, need_graph):
    """Inputs as fresh leaves (or differentiable aliases with create_graph) that require grad."""
    res = []
    for x in inputs:
        if create_graph and x.requires_grad:
            res.append(x.view_as(x))
        elif not x.requires_grad:       # an alias keeps a dual tensor's tangents (NOTE [forward AD]); detach drops them
            res.append(x.view_as(x).requires_grad_(need_graph))
        else:
            res.append(x.detach().requires_grad_(need_graph))
    return tuple(res)


def _post(xs, create_graph):
    return tuple(x if create_graph or x is None else x.detach() for x in xs)


def _fill_unused(grads, refs, strict, create_graph, what):
    from .. import zeros_like
    out = []
    for i, (g, r) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This "
                                   f"is not allowed in strict mode.")
            g = zeros_like(r)
        out.append(g)
    return tuple(out)


def _check_requires_grad(outputs, input_type, strict):     # torch's signature (libraries call it)
    if not strict:
        return
    for i, o in enumerate(outputs):
        if o is None or not o.requires_grad:
            raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The outputs "
                               f"must be computed in a differentiable manner from the input when running in strict "
                               f"mode.")


def _autograd(outputs, inputs, grad_outputs, create_graph):
    return _autograd_grad(outputs, inputs, grad_outputs, create_graph=create_graph, retain_graph=True)


# torch's other private helpers of this module, with torch's signatures: libraries import them
# (pytorch-minimize: _construct_standard_basis_for, _grad_postprocess, _tuple_postprocess)
def _tuple_postprocess(res, to_unpack):
    """Unpack the one-element tuples a function of a single tensor (``to_unpack`` False) gets back; a pair of
    flags for the nested results of jacobian/hessian."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(r[0] for r in res)
        return res if to_unpack[0] else res[0]
    return res if to_unpack else res[0]


def _grad_preprocess(inputs, create_graph, need_graph):
    return _prep(inputs, create_graph, need_graph)


def _grad_postprocess(inputs, create_graph):
    if not inputs or isinstance(inputs[0], TensorImpl) or inputs[0] is None:
        return _post(inputs, create_graph)
    return tuple(_grad_postprocess(x, create_graph) for x in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if tuple(a.shape) != tuple(b.shape):
            prepend = f"Entry {i} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {b.size()} but got {a.size()}.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None, is_grads_batched=False):
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    outs, gos = [], []
    for o, g in zip(outputs, grad_outputs):
        if o is not None and o.requires_grad:
            outs.append(o)
            gos.append(g)
    if not outs:
        return (None,) * len(inputs)
    return _grad(outs, inputs, gos, allow_unused=True, create_graph=create_graph, retain_graph=retain_graph,
                 is_grads_batched=is_grads_batched)


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    return _fill_unused(grads, refs, strict, create_graph, stage)


def _construct_standard_basis_for(tensors, tensor_numels):
    """The N x N identity (N the numels' sum) cut into one (N, numel) block of columns per tensor, each in its
    tensor's dtype and device: the batched v's of a vectorized jacobian."""
    total = sum(tensor_numels)
    chunks = tuple(t.new_zeros(total, n) for t, n in zip(tensors, tensor_numels))
    start = 0
    for chunk, n in zip(chunks, tensor_numels):
        chunk.diagonal(start).fill_(1)
        start -= n
    return chunks


def _ones_like_check(v, outputs, fn_name):
    if v is None:
        if len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError(f"The vector v can only be None if the user-provided function returns a single "
                               f"Tensor with a single element.")
        from .. import ones_like
        return (ones_like(outputs[0]),)
    _, v = _as_tuple(v, 'v', fn_name)
    if len(v) != len(outputs):
        raise RuntimeError(f"v has invalid size: should be {len(outputs)} but got {len(v)}")
    for i, (a, b) in enumerate(zip(v, outputs)):
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(f"Entry {i} in v has invalid size: should be {list(b.shape)} but got {list(a.shape)}")
    return v


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``."""
    with enable_grad():
        is_tuple, inputs = _as_tuple(inputs, 'inputs', 'vjp')
        inputs = _prep(inputs, create_graph, True)
        out_tuple, outputs = _as_tuple(func(*inputs), 'outputs of the user-provided function', 'vjp')
        _check_requires_grad(outputs, 'outputs', strict)
        v = _ones_like_check(v, outputs, 'vjp')
        grads = _autograd(outputs, inputs, v, create_graph)
        grads = _fill_unused(grads, inputs, strict, create_graph, 'vjp')
    outputs, grads = _post(outputs, create_graph), _post(grads, create_graph)
    return (outputs if out_tuple else outputs[0]), (grads if is_tuple else grads[0])


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)`` by the double-backward trick."""
    from .. import zeros_like
    with enable_grad():
        is_tuple, inputs = _as_tuple(inputs, 'inputs', 'jvp')
        inputs = _prep(inputs, create_graph, True)
        if v is None:
            if len(inputs) != 1 or inputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                                   "single Tensor with a single element.")
            from .. import ones_like
            v = (ones_like(inputs[0]),)
        else:
            v = _ones_like_check(v, inputs, 'jvp')
        out_tuple, outputs = _as_tuple(func(*inputs), 'outputs of the user-provided function', 'jvp')
        _check_requires_grad(outputs, 'outputs', strict)
        u = tuple(zeros_like(o).requires_grad_(True) for o in outputs)
        g = _autograd(outputs, inputs, u, True)
        pairs = [(gi, vi) for gi, vi in zip(g, v) if gi is not None and gi.requires_grad]
        if pairs:
            res = _grad([p[0] for p in pairs], u, [p[1] for p in pairs], allow_unused=True, create_graph=create_graph)
        else:
            res = (None,) * len(u)
        res = _fill_unused(res, outputs, strict, create_graph, 'jvp')
    outputs, res = _post(outputs, create_graph), _post(res, create_graph)
    return (outputs if out_tuple else outputs[0]), (res if out_tuple else res[0])


def _stack_rows(rows, out_shape, in_shape, like):
    """rows[i] is the gradient of output element i: the Jacobian of shape out_shape + in_shape."""
    from .. import zeros
    if not rows:
        return zeros(tuple(out_shape) + tuple(in_shape), dtype=like.dtype, device=like.device)
    import ember
    if hasattr(ember, 'stack'):
        return ember.stack(rows).reshape(tuple(out_shape) + tuple(in_shape))
    n = len(rows)      # no stack operator: sum of one-hot outer products (differentiable, small n only)
    total = None
    for i, r in enumerate(rows):
        e = np.zeros(n, dtype=r.dtype.np)
        e[i] = 1
        term = ember.from_numpy(e).reshape((n,) + (1,) * r.dim()) * r.unsqueeze(0)
        total = term if total is None else total + term
    return total.reshape(tuple(out_shape) + tuple(in_shape))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy='reverse-mode'):
    """The Jacobian of ``func`` at ``inputs``: for output i and input j, a tensor of shape
    ``outputs[i].shape + inputs[j].shape``, nested in tuples as torch does."""
    if strategy not in ('reverse-mode', 'forward-mode'):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                         'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                         'Otherwise, prefer to use "reverse-mode".')
    if strategy == 'forward-mode':
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please either set '
                                      '`create_graph=False` or `strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError('torch.autograd.functional.jacobian: `strategy="forward-mode"` is only '
                                      'implemented together with `vectorize=True`.')
        return _jacobian_forward(func, inputs, strict)
    from .. import from_numpy, zeros_like
    with enable_grad():
        is_tuple, inputs = _as_tuple(inputs, 'inputs', 'jacobian')
        inputs = _prep(inputs, create_graph, True)
        out_tuple, outputs = _as_tuple(func(*inputs), 'outputs of the user-provided function', 'jacobian')
        _check_requires_grad(outputs, 'outputs', strict)
        result = []
        for i, o in enumerate(outputs):
            rows = [[] for _ in inputs]
            n = o.numel()
            for j in range(n):
                e = np.zeros(n, dtype=o.dtype.np)
                e[j] = 1
                gs = _autograd((o,), inputs, (from_numpy(e).reshape(tuple(o.shape)).to(o.device),), create_graph)
                for k, (g, x) in enumerate(zip(gs, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{k}. This is not allowed in strict mode.")
                        g = zeros_like(x)
                    rows[k].append(g)
            per_in = tuple(_stack_rows(r, tuple(o.shape), tuple(x.shape), x) for r, x in zip(rows, inputs))
            result.append(_post(per_in, create_graph))
    if out_tuple:
        return tuple(r if is_tuple else r[0] for r in result)
    return result[0] if is_tuple else result[0][0]


def _jacobian_forward(func, inputs, strict):
    """The Jacobian by forward-mode AD: one jvp per input element (NOTE [forward AD]), the columns stacked."""
    from .. import eye, stack, zeros, zeros_like
    from . import forward_ad as fwAD
    is_tuple, inputs = _as_tuple(inputs, 'inputs', 'jacobian')
    cols = [[] for _ in inputs]       # cols[k][j]: output tangents for element j of input k
    outputs = out_tuple = None
    for k, x in enumerate(inputs):
        n = x.numel()
        basis = eye(n, dtype=x.dtype).reshape((n,) + tuple(x.shape)) if n else None
        for j in range(n):
            with fwAD.dual_level():
                duals = [fwAD.make_dual(y.detach(), basis[j] if i == k else zeros_like(y))
                         for i, y in enumerate(inputs)]
                out_tuple, outs = _as_tuple(func(*duals), 'outputs of the user-provided function', 'jacobian')
                res = [fwAD.unpack_dual(o) for o in outs]
                outputs = tuple(r.primal.detach() for r in res)
                if strict and any(r.tangent is None for r in res):
                    raise RuntimeError("Output of the user-provided function is independent of input "
                                       f"{k}. This is not allowed in strict mode.")
                cols[k].append([zeros_like(r.primal) if r.tangent is None else r.tangent.detach() for r in res])
    if outputs is None:
        out_tuple, outputs = _as_tuple(func(*inputs), 'outputs of the user-provided function', 'jacobian')
    result = []
    for i, o in enumerate(outputs):
        per_in = []
        for k, x in enumerate(inputs):
            shape = tuple(o.shape) + tuple(x.shape)
            per_in.append(stack([c[i] for c in cols[k]], -1).reshape(shape) if cols[k] else
                          zeros(shape, dtype=o.dtype))
        result.append(per_in)
    # torch's vectorized forward-mode path returns lists where the reverse one returns tuples
    if out_tuple:
        return [r for r in result] if is_tuple else tuple(r[0] for r in result)
    return result[0] if is_tuple else result[0][0]


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy='reverse-mode'):
    """The Hessian of a scalar function: for inputs i and j a tensor of shape ``inputs[i].shape + inputs[j].shape``."""
    is_tuple, ins = _as_tuple(inputs, 'inputs', 'hessian')

    def jac_func(*xs):
        out = func(*xs)
        _, outs = _as_tuple(out, 'outputs of the user-provided function', 'hessian')
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor with a single element.")
        return jacobian(lambda *ys: func(*ys), xs, create_graph=True, strict=strict)

    if outer_jacobian_strategy not in ('reverse-mode', 'forward-mode'):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    res = jacobian(jac_func, ins, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    if not is_tuple:
        return res[0][0] if isinstance(res, (tuple, list)) and isinstance(res[0], (tuple, list)) else \
            (res[0] if isinstance(res, (tuple, list)) else res)
    return res


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` for a scalar ``func``."""
    with enable_grad():
        is_tuple, inputs = _as_tuple(inputs, 'inputs', 'vhp')
        inputs = _prep(inputs, create_graph, True)
        out_tuple, outputs = _as_tuple(func(*inputs), 'outputs of the user-provided function', 'vhp')
        if len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("The function given to vhp should return a single Tensor with a single element.")
        v = _hv_check(v, inputs, 'vhp')
        jac = _autograd(outputs, inputs, (None,), True)
        pairs = [(j, vi) for j, vi in zip(jac, v) if j is not None and j.requires_grad]
        res = _grad([p[0] for p in pairs], inputs, [p[1] for p in pairs], allow_unused=True,
                    create_graph=create_graph) if pairs else (None,) * len(inputs)
        res = _fill_unused(res, inputs, strict, create_graph, 'vhp')
    outputs, res = _post(outputs, create_graph), _post(res, create_graph)
    return outputs[0], (res if is_tuple else res[0])


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` for a scalar ``func`` (double-backward trick)."""
    from .. import zeros_like
    with enable_grad():
        is_tuple, inputs = _as_tuple(inputs, 'inputs', 'hvp')
        inputs = _prep(inputs, create_graph, True)
        out_tuple, outputs = _as_tuple(func(*inputs), 'outputs of the user-provided function', 'hvp')
        if len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("The function given to hvp should return a single Tensor with a single element.")
        v = _hv_check(v, inputs, 'hvp')
        jac = _autograd(outputs, inputs, (None,), True)
        u = tuple(zeros_like(x).requires_grad_(True) for x in inputs)
        pairs = [(j, ui) for j, ui in zip(jac, u) if j is not None and j.requires_grad]
        if pairs:
            db = _grad([p[0] for p in pairs], inputs, [p[1] for p in pairs], allow_unused=True, create_graph=True)
            pairs2 = [(d, vi) for d, vi in zip(db, v) if d is not None and d.requires_grad]
            res = _grad([p[0] for p in pairs2], u, [p[1] for p in pairs2], allow_unused=True,
                        create_graph=create_graph) if pairs2 else (None,) * len(u)
        else:
            res = (None,) * len(u)
        res = _fill_unused(res, inputs, strict, create_graph, 'hvp')
    outputs, res = _post(outputs, create_graph), _post(res, create_graph)
    return outputs[0], (res if is_tuple else res[0])


def _hv_check(v, inputs, fn_name):
    if v is None:
        if len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                               "single Tensor with a single element.")
        from .. import ones_like
        return (ones_like(inputs[0]),)
    return _ones_like_check(v, inputs, fn_name)
