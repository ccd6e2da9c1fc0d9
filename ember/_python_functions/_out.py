"""``out=`` for the public functions written in Python (NOTE [out= of Python-written functions]).

NOTE [out= of Python-written functions]: a declared operator gets its ``out=`` variant from ``declare(...,
out=True)`` (ember/_ops/adapters.py ``out_kernel``). A function written in Python computes its result and hands it
to ``write_out``, which does what torch's out= kernels do: check out's dtype (``can_cast`` from the result's, or,
with ``same_dtype``, equality with torch's message for the function), resize out to the result's shape through
``aten._resize_output_`` (torch's deprecation warning when out held elements), copy, and return out itself. Never
``out.copy_(r)`` alone: it broadcasts ``r`` into an out of the wrong shape, or fails on an empty one.
"""
from .._core.dtype import can_cast, check_cast, check_same_dtype, scalar_name
from ..ops import aten

_resize_output_ = aten._resize_output_.default


def write_out(out, res, same_dtype=None, cast=True, refuse_grad=None):
    """Write ``res`` (a tensor or a tuple of them) into ``out`` (a tensor or a sequence of them), as torch's out=:
    ``same_dtype``: a message template (_core.dtype.check_same_dtype) when out's dtype must equal the result's;
    ``cast=False``: any dtype is accepted (torch's kernels that copy into out without a check); ``cast`` a message
    template (placeholders ``res``, ``out``): can_cast's rule with that function's own words. Returns out (a tuple
    of them for several results). ``refuse_grad``: the operator named in torch's error when an argument requires
    grad (torch's out= kernels with an autograd kernel refuse: where, mm); without it, as torch's composites whose
    last step is ``out.copy_(result)``, the copy is recorded (out gets a CopyBackwards node).

    >>> import ember
    >>> o = ember.empty(0)
    >>> write_out(o, ember.ones(2)) is o, o.shape
    (True, ember.Size([2]))
    """
    outs = out if isinstance(out, (tuple, list)) else (out,)
    ress = res if isinstance(res, tuple) else (res,)
    if refuse_grad is not None and (any(o.requires_grad for o in outs) or any(r.requires_grad for r in ress)):
        raise RuntimeError(f"{refuse_grad}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    for o, r in zip(outs, ress):
        if same_dtype is not None:
            check_same_dtype(same_dtype, r.dtype, o.dtype)
        elif isinstance(cast, str):
            if not can_cast(r.dtype, o.dtype):
                raise RuntimeError(cast.format(res=scalar_name(r.dtype), out=scalar_name(o.dtype)))
        elif cast:
            check_cast(r.dtype, o.dtype)
        _resize_output_(o, r.shape, o.device).copy_(r)
    return tuple(outs) if isinstance(res, tuple) else outs[0]
