"""Reverse-mode transforms of ember.func: grad, grad_and_value, vjp, jacrev (torch.func's API).

Each transform runs the user's function on inputs that it makes differentiable, then asks ember.autograd for the
gradients. NOTE [func levels]: a transform is composable because its own gradient computation is recorded
(``create_graph=True``) whenever something outside it may differentiate again: an input already requires grad (an
outer transform or the user's autograd), or another transform is running around it (``_depth``, counted per
thread). Each transform differentiates only with respect to the fresh aliases it made of its own inputs, so a
tensor an outer transform differentiates is a constant to the inner one: ``grad(grad(f))`` and
``jacrev(jacrev(f))`` give second derivatives without confusing the levels. Outside every transform the results
are plain tensors that do not require grad, as torch.func's are.

NOTE [func under no_grad]: a transform computes its gradients whatever the grad mode around it (``grad(f)(x)``
works inside ``no_grad``), but what it does is recorded at the level around it only when that level's grad mode is
on, as torch's transform levels keep the grad mode they were entered with. Under no_grad the inputs enter
detached and the results leave detached (``vjp``'s pullback: the grad mode when it is called, torch's default
``create_graph``), so that they neither require grad nor hold a graph; tangents of a jvp around are kept
(``jvp(jacrev(f))``, a Hessian-vector product, records its backward for them).
"""
import threading

import ember
from ..autograd import grad as _autograd_grad
from ..autograd import forward_ad as fwAD
from ._tree import tree_flatten, tree_unflatten
from .._functorch import TRANSFORMS
from .._functorch import eager_transforms as _eager_transforms

_state = threading.local()


def _depth():
    return getattr(_state, 'depth', 0)


class _Level:
    """One running transform (NOTE [func levels])."""
    def __enter__(self):
        _state.depth = _depth() + 1
        TRANSFORMS.stack.append('grad')     # NOTE [functorch transform stack]
        self._grad = ember.is_grad_enabled()     # the grad mode around it (NOTE [func under no_grad])
        ember.set_grad_enabled(True)        # torch.func.grad ignores an outer no_grad (a no_grad inside f holds)
        return self

    def __exit__(self, *exc):
        _state.depth -= 1
        TRANSFORMS.stack.pop()
        ember.set_grad_enabled(self._grad)


def _check_argnums(argnums, nargs, api):
    if nargs == 0:
        raise RuntimeError(f"{api}(f)(*args): f must be called with at least one positional argument "
                           f"(torch.func differentiates with respect to positional arguments)")
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    if isinstance(argnums, tuple) and len(argnums) == 0:
        raise RuntimeError(f"{api}: argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"{api}: argnums must be int or Tuple[int, ...], got: {type(a)}")
        if not -nargs <= a < nargs:
            raise RuntimeError(f"Got argnum={a}, but only {nargs} positional inputs")
    if isinstance(argnums, tuple) and len(set(a % nargs for a in nums)) != len(nums):
        raise RuntimeError(f"{api}: argnums must be unique, got {argnums}")


def _wrap(x, api):
    """A fresh differentiable alias of an input (NOTE [func levels])."""
    if not isinstance(x, ember.Tensor):
        raise RuntimeError(f"{api}: Expected the inputs to differentiate with respect to to be Tensors, got "
                           f"{type(x).__name__}")
    if not (x.is_floating_point() or x.is_complex()):
        raise RuntimeError(f"{api}: only Tensors of floating point dtype can require gradients, got {x.dtype}")
    return _eager_transforms._wrap_tensor_for_grad(x, _depth())        # looked up here: a library may replace it


def _prepare(args, argnums, api, outer_grad):
    """The arguments with those at ``argnums`` replaced by differentiable aliases; the aliases as a pytree (one per
    argnum, a tuple when argnums is a tuple) and flat; whether the level around sees the computation (``graph``:
    its grad mode is on and it differentiates, NOTE [func under no_grad]); whether the computation must be recorded
    (``graph``, or tangents of a jvp around must flow through the backward)."""
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    args = list(args)
    chosen, flat, graph = [], [], outer_grad and _depth() > 1
    for a in nums:
        leaves, spec = tree_flatten(args[a])
        if outer_grad:
            graph = graph or any(isinstance(x, ember.Tensor) and x.requires_grad for x in leaves)
        else:
            leaves = [fwAD._detach_keeping_tangents(x) if isinstance(x, ember.Tensor) else x for x in leaves]
        w = [_wrap(x, api) for x in leaves]
        flat.extend(w)
        args[a] = tree_unflatten(w, spec)
        chosen.append(args[a])
    diff = tuple(chosen) if isinstance(argnums, tuple) else chosen[0]
    return args, diff, flat, graph, graph or fwAD._current_level() >= 0


def _split_aux(out, has_aux, api):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}(f)(*args): output of function f should be a tuple: (output, aux) if "
                           f"has_aux is True")
    return out


def _grads(outputs, inputs, cotangents, record):
    """d(outputs)/d(inputs) contracted with ``cotangents``; zeros where an input is unused."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if not pairs:
        return [ember.zeros_like(x) for x in inputs]
    gs = _autograd_grad([o for o, _ in pairs], inputs, [c for _, c in pairs], retain_graph=True,
                        create_graph=record, allow_unused=True)
    return [ember.zeros_like(x) if g is None else g for g, x in zip(gs, inputs)]


def _undo(tree, graph):
    """Results the level around does not differentiate are plain tensors (NOTE [func levels], NOTE [func under
    no_grad]), keeping the tangents of a jvp around."""
    if graph:
        return tree
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fwAD._detach_keeping_tangents(x) if isinstance(x, ember.Tensor) else x for x in leaves],
                          spec)


def grad_and_value(func, argnums=0, has_aux=False):
    """``func``'s gradient with respect to the arguments at ``argnums`` and its value (torch.func.grad_and_value).

    >>> import ember
    >>> from ember.func import grad_and_value
    >>> grad_and_value(lambda x: (x ** 2).sum())(ember.tensor([1., 2.]))
    (tensor([2., 4.]), tensor(5.))
    """
    def wrapper(*args, **kwargs):
        api = 'grad_and_value'
        _check_argnums(argnums, len(args), api)
        with _Level() as lv:
            args, diff, flat, graph, record = _prepare(args, argnums, api, lv._grad)
            out, aux = _split_aux(func(*args, **kwargs), has_aux, api)
            if not isinstance(out, ember.Tensor):
                raise RuntimeError(f"{api}(f)(*args): Expected f(*args) to return a Tensor, got {type(out)}")
            if out.dim() != 0:
                raise RuntimeError(f"{api}(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
                                   f"{out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            gs = _grads([out], flat, [None], record)
            g = tree_unflatten(gs, tree_flatten(diff)[1])
        res = (g, (out, aux)) if has_aux else (g, out)
        return _undo(res, graph)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of a scalar function with respect to the arguments at ``argnums`` (torch.func.grad).

    >>> import ember
    >>> from ember.func import grad
    >>> grad(grad(lambda x: x.sin().sum()))(ember.tensor(0.5))     # -sin(0.5)
    tensor(-0.4794)
    """
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` is the vector-Jacobian product (torch.func.vjp).

    >>> import ember
    >>> from ember.func import vjp
    >>> out, vjp_fn = vjp(ember.sin, ember.tensor([0., 1.]))
    >>> vjp_fn(ember.ones(2))
    (tensor([1.0000, 0.5403]),)
    """
    api = 'vjp'
    with _Level() as lv:
        args, diff, flat, graph, record = _prepare(primals, tuple(range(len(primals))), api, lv._grad) if primals \
            else ([], (), [], False, False)
        out, aux = _split_aux(func(*args), has_aux, api)
    out_leaves, out_spec = tree_flatten(out)
    for o in out_leaves:
        if not isinstance(o, ember.Tensor):
            raise RuntimeError(f"{api}(f, *primals): Expected f to be a function that has only Tensors as outputs, "
                               f"got {type(o)}")
    in_spec = tree_flatten(diff)[1]

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {ct_spec}, primal output: {out_spec}")
        for c, o in zip(ct, out_leaves):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {c.shape} and output[0] has "
                                   f"a shape of {o.shape}.")
        if create_graph is None:     # torch's default: the grad mode now (NOTE [func under no_grad])
            g = ember.is_grad_enabled() and (graph or _depth() > 0 or any(c.requires_grad for c in ct))
            rec = g or fwAD._current_level() >= 0
        else:
            g = rec = create_graph
        with _Level():
            gs = _grads(out_leaves, flat, ct, rec)
        return _undo(tree_unflatten(gs, in_spec), g)
    res_out = _undo(out, graph)
    return (res_out, vjp_fn, _undo(aux, graph)) if has_aux else (res_out, vjp_fn)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of ``func`` with respect to the arguments at ``argnums``, one backward per row
    (torch.func.jacrev). The result for an output of shape ``O`` and an input of shape ``I`` has shape ``O + I``;
    several outputs or inputs give the same nesting as torch's (outputs outside, argnums inside).

    >>> import ember
    >>> from ember.func import jacrev
    >>> jacrev(lambda x: x ** 2)(ember.tensor([1., 2.]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    def wrapper(*args, **kwargs):
        api = 'jacrev'
        _check_argnums(argnums, len(args), api)
        with _Level() as lv:
            args, diff, flat, graph, record = _prepare(args, argnums, api, lv._grad)
            out, aux = _split_aux(func(*args, **kwargs), has_aux, api)
            outs, out_spec = tree_flatten(out)
            for o in outs:
                if not isinstance(o, ember.Tensor):
                    raise RuntimeError(f"{api}(f, ...): Expected f to be a function that has only Tensors as "
                                       f"outputs, got {type(o)}")
            in_spec = tree_flatten(diff)[1]
            per_out = [_jacobian_rows(o, flat, record, chunk_size) for o in outs]
        nested = []
        for rows in per_out:        # rows: one Jacobian per flat input
            j = tree_unflatten(rows, in_spec)
            nested.append(j)
        jac = tree_unflatten(nested, out_spec)
        return _undo((jac, aux) if has_aux else jac, graph)
    return wrapper


def _jacobian_rows(out, flat, record, chunk_size=None):
    """The Jacobian of one output with respect to each flat input: shapes ``out.shape + x.shape``; the vjps of
    the rows of the identity run as one vmapped backward, as torch's jacrev does (a loop of backwards where an
    outer transform records the computation, which the batched backward does not support yet)."""
    n = out.numel()
    if n == 0 or not out.requires_grad:
        return [ember.zeros(tuple(out.shape) + tuple(x.shape), dtype=x.dtype) for x in flat]
    eye = ember.eye(n, dtype=out.dtype).reshape((n,) + tuple(out.shape))
    if not record:
        from ._vmap import vmap
        gs = vmap(lambda ct: tuple(_grads([out], flat, [ct], False)), chunk_size=chunk_size)(eye)
        return [g.reshape(tuple(out.shape) + tuple(x.shape)) for g, x in zip(gs, flat)]
    rows = [[] for _ in flat]
    for i in range(n):
        gs = _grads([out], flat, [eye[i]], record)
        for r, g in zip(rows, gs):
            r.append(g)
    return [ember.stack(r).reshape(tuple(out.shape) + tuple(x.shape)) for r, x in zip(rows, flat)]
