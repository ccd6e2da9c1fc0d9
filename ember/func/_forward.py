"""Forward-mode transforms of ember.func: jvp, jacfwd, linearize, and hessian as jacfwd(jacrev) (torch.func's).

They run the user's function on dual tensors at a dual level of their own (ember.autograd.forward_ad, NOTE
[forward AD]), so they nest with each other (``jvp(jvp(f))``) and with the reverse-mode transforms
(``jacfwd(jacrev(f))``: the backward formulas of the inner transform run on dual tensors).
"""
import ember
from ..autograd import forward_ad as fwAD
from ._tree import tree_flatten, tree_unflatten
from .._functorch import TRANSFORMS
from ._reverse import _check_argnums, _split_aux, _undo, jacrev, _depth
from ._vmap import vmap


def _nested():
    return _depth() > 0 or fwAD._current_level() >= 0


class _DualLevel:
    def __enter__(self):
        self.level = fwAD.enter_dual_level()
        TRANSFORMS.stack.append('jvp')      # NOTE [functorch transform stack]
        return self.level

    def __exit__(self, *exc):
        fwAD.exit_dual_level(level=self.level)
        TRANSFORMS.stack.pop()


def _unpack(out, level, api):
    leaves, spec = tree_flatten(out)
    prim, tans = [], []
    for o in leaves:
        if not isinstance(o, ember.Tensor):
            raise RuntimeError(f"{api}(f, primals, tangents): Expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(o)}")
        p, t = fwAD.unpack_dual(o, level=level)
        prim.append(p)
        tans.append(ember.zeros_like(p) if t is None else t)
    return tree_unflatten(prim, spec), tree_unflatten(tans, spec)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)`` by forward-mode AD (torch.func.jvp).

    >>> import ember
    >>> from ember.func import jvp
    >>> jvp(ember.sin, (ember.tensor([0., 1.]),), (ember.ones(2),))
    (tensor([0.0000, 0.8415]), tensor([1.0000, 0.5403]))
    """
    api = 'jvp'
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{api}(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid "
                           f"to call f(*primals).")
    p_leaves, p_spec = tree_flatten(primals)
    t_leaves, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{api}(f, primals, tangents): Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, tangents also must be. Got "
                           f"primals with structure {p_spec} and tangents with structure {t_spec}")
    for p, t in zip(p_leaves, t_leaves):
        if not isinstance(p, ember.Tensor) or not isinstance(t, ember.Tensor):
            raise RuntimeError(f"{api}(f, primals, tangents): Expected primals and tangents to only contain Tensors")
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"{api}(f, primals, tangents): Expected primals and tangents to have the same shape. "
                               f"Got primal of shape {tuple(p.shape)} and tangent of shape {tuple(t.shape)}")
    with _DualLevel() as level:
        duals = [fwAD.make_dual(p, t.to(p.dtype), level=level) for p, t in zip(p_leaves, t_leaves)]
        out, aux = _split_aux(func(*tree_unflatten(duals, p_spec)), has_aux, api)
        primal_out, tangent_out = _unpack(out, level, api)
        if has_aux:
            aux = ember.func._tree.tree_map(
                lambda a: fwAD.unpack_dual(a, level=level).primal if isinstance(a, ember.Tensor) else a, aux)
    res = (primal_out, tangent_out, aux) if has_aux else (primal_out, tangent_out)
    # under no_grad the results hold no graph (NOTE [func under no_grad]); tangents of a jvp around stay
    return _undo(res, ember.is_grad_enabled() and (_nested() or any(x.requires_grad for x in p_leaves + t_leaves)))


def jacfwd(func, argnums=0, has_aux=False, *, randomness='error'):
    """The Jacobian of ``func`` by forward-mode AD, one jvp per input element (torch.func.jacfwd); same shapes
    and nesting as ``jacrev`` (outputs outside, argnums inside).

    >>> import ember
    >>> from ember.func import jacfwd
    >>> jacfwd(lambda x: x ** 2)(ember.tensor([1., 2.]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if randomness not in ('error', 'different', 'same'):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")

    def wrapper(*args, **kwargs):
        api = 'jacfwd'
        _check_argnums(argnums, len(args), api)
        nums = argnums if isinstance(argnums, tuple) else (argnums,)
        args = list(args)
        chosen = [tree_flatten(args[a]) for a in nums]
        flat = [x for leaves, _ in chosen for x in leaves]
        for x in flat:
            if not isinstance(x, ember.Tensor) or not (x.is_floating_point() or x.is_complex()):
                raise RuntimeError(f"{api}: Expected the inputs to differentiate with respect to to be floating "
                                   f"point Tensors")

        def call(new_flat):
            a2, k = list(args), 0
            for a, (leaves, spec) in zip(nums, chosen):
                a2[a] = tree_unflatten(new_flat[k:k + len(leaves)], spec)
                k += len(leaves)
            return func(*a2, **kwargs)
        cols = []       # cols[k][i]: output i's tangents for the basis of flat input k, the basis first
        for k, x in enumerate(flat):
            n = x.numel()
            if n == 0:
                cols.append(None)
                continue
            eye = ember.eye(n, dtype=x.dtype).reshape((n,) + tuple(x.shape))

            def column(t, k=k):     # one jvp per basis vector, all of them in one vmap (as torch's jacfwd)
                tans = [ember.zeros_like(y) if i != k else t for i, y in enumerate(flat)]
                res = jvp(lambda *fs: call(list(fs)), tuple(flat), tuple(tans), has_aux=has_aux)
                return tree_flatten(res[1])[0]
            cols.append(vmap(column, randomness=randomness)(eye))
        out, aux = _split_aux(call(flat), has_aux, api)      # the value (and aux) once more, outside vmap
        outs, out_spec = tree_flatten(out)
        in_spec = tree_flatten(tuple(args[a] for a in nums) if isinstance(argnums, tuple) else args[nums[0]])[1]
        jac_per_out = []
        for i, o in enumerate(outs):
            blocks = []
            for k, x in enumerate(flat):
                shape = tuple(o.shape) + tuple(x.shape)
                if x.numel() == 0 or o.numel() == 0:
                    blocks.append(ember.zeros(shape, dtype=o.dtype))
                else:       # columns along the last dim, then the input's shape
                    blocks.append(cols[k][i].movedim(0, -1).reshape(shape))
            jac_per_out.append(tree_unflatten(blocks, in_spec))
        jac = tree_unflatten(jac_per_out, out_spec)
        return (jac, aux) if has_aux else jac
    return wrapper


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian-vector product at ``primals``
    (torch.func.linearize). torch traces the linear function once with make_fx; ember has no such tracer for
    this, so each ``jvp_fn`` call runs ``jvp`` at the saved primals again (same values, more time).

    >>> import ember
    >>> from ember.func import linearize
    >>> out, jvp_fn = linearize(ember.sin, ember.tensor([0., 1.]))
    >>> jvp_fn(ember.ones(2))
    tensor([1.0000, 0.5403])
    """
    saved = tuple(p.detach() if isinstance(p, ember.Tensor) else p for p in primals)
    out = func(*saved)
    out_spec = tree_flatten(out)[1]

    def jvp_fn(*tangents):
        p_spec, t_spec = tree_flatten(saved)[1], tree_flatten(tangents)[1]
        if p_spec != t_spec:
            raise RuntimeError(f"linearize: Expected the tangents to have the same structure as the primals: "
                               f"{p_spec} vs {t_spec}")
        t_out = jvp(func, saved, tuple(tangents))[1]
        assert tree_flatten(t_out)[1] == out_spec
        return t_out
    return out, jvp_fn


def hessian(func, argnums=0):
    """The Hessian of a scalar function: ``jacfwd(jacrev(func))``, as torch.func.hessian computes it.

    >>> import ember
    >>> from ember.func import hessian
    >>> hessian(lambda x: (x ** 3).sum())(ember.tensor([1., 2.]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)
