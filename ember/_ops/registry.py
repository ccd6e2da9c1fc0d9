"""The operator table: one declaration per operator.

`declare` records everything ember knows of an operator in one `OpDecl`:
its schema, its meta function (shape and dtype rule, or the view geometry),
its derivative formulas, an optional composite definition, and which public
names it gets. From this table ember generates the ``ember.*`` functions, the
Tensor methods, the in-place (``add_``) and ``out=`` variants, the Meta
backend, the Autograd kernels and the op tests. Backends only add kernels:
``_backends/cpu`` registers an array function per operator name.

Kinds of operators (``kind=``):
  ``pointwise``  elementwise with broadcasting and torch's type promotion; inputs
                 are cast to the computation dtype before the kernel runs
  ``generic``    any other op with its own meta function
  ``view``       no kernel at all: the meta function returns the view's sizes,
                 strides and offset, and every backend shares the input's storage
  ``factory``    no tensor inputs; the ``device`` argument selects the backend
"""
from .._dispatch import dispatcher
from .._core.dispatch_key import DispatchKey


class OpDecl:
    def __init__(self, schema, meta=None, kind='generic', derivatives=None, composite=None, inplace=False,
                 out=False, method=True, function=True, nn=False, name=None,
                 grad_name=None, differentiable=True, tags=(), doc=None, explicit=None, output_differentiability=None,
                 first_order=None, complex_formulas=False, autograd_composite=None, ns='aten', primitive_because=None, forward=None,
                 saved_for=None, out_dtype=None, torch_graph=None):
        self.schema_text = schema
        self.meta = meta
        self.kind = kind
        self.derivatives = derivatives or {}
        # formulas with the same keys as ``derivatives`` for a backward that is not itself recorded (no
        # create_graph): they may call fused backward kernels that have no derivative of their own. The
        # autograd kernel picks between the two (autograd/kernels.py); a formula never asks the grad mode.
        self.first_order = first_order or {}
        # for a joint formula (one function for several inputs): which inputs' gradients need each value it reads,
        # e.g. linear's {'input': ('weight',), 'weight': ('input',)}: the value is saved only when one of those
        # requires grad (as torch's addmm saves mat1 for mat2's gradient), and arrives as None otherwise
        self.saved_for = saved_for or {}
        # NOTE [complex gradients]: False (most operators) means the formulas are written for real tensors and
        # the autograd kernel evaluates them on the conjugates of the saved values when the output is complex;
        # True means they are written for complex tensors as they stand (abs, angle, sgn, the FFTs, ...)
        self.complex_formulas = complex_formulas
        self.composite = composite
        # the forward-mode derivative (NOTE [forward AD] in autograd/forward.py): a formula of the primals, their
        # tangents (``self_t``) and the results, or a rule's name ('linear', 'self_adjoint', 'transpose',
        # 'not_implemented'); None: the kind's default (pointwise: self_adjoint, view: linear)
        self.forward = forward
        # torch's CompositeImplicitAutograd definition of an operator ember also gives a fused kernel (matmul,
        # einsum): with an input that requires grad, the operator records this composite's graph, so it saves
        # what torch's pieces save; with none, the kernel runs. Where it returns None the derivative formulas
        # record one node instead (autograd/kernels.py).
        self.autograd_composite = autograd_composite
        # ``(node, *args) -> node``: where torch's composite records several nodes around the one product ember's
        # fused kernel and formulas compute (linear: an AddmmBackward0 whose weight edge passes a TBackward0), this
        # builds them around the recorded ``node`` and returns the one the output gets (autograd/kernels.py)
        self.torch_graph = torch_graph
        # one line saying why an operator torch defines as a composite (CompositeImplicitAutograd) has a kernel of
        # its own here; tests/test_registry_coverage.py checks the list against torch's dispatcher
        self.primitive_because = primitive_because
        self.inplace = inplace
        self.out = out
        # out=: None lets the result be cast to out's dtype where torch's can_cast allows (TensorIterator ops);
        # a message template (_core.dtype.SAME_DTYPE, FOUND_DTYPE, or the op's own) requires out's dtype to be the
        # result's, as torch's non-TensorIterator kernels check (sort, inverse, cross); or a function
        # ``(result dtype, out dtype, *args)`` that raises, where the rule depends on the arguments (diag)
        self.out_dtype = out_dtype
        self.method = method
        self.function = function
        self.nn = nn
        self.grad_name = grad_name
        self.differentiable = differentiable
        self.output_differentiability = output_differentiability   # per output, as derivatives.yaml; None: all
        # torch's nondeterministic_seeded: the operator draws from a Generator (random, dropout, bernoulli...), so
        # two calls with equal arguments differ: graph passes never merge, recompute or fuse it
        self.tags = tuple(tags) + ((kind,) if kind == 'pointwise' else ()) + \
            (('nondeterministic_seeded',) if 'Generator' in schema else ())
        self.doc = doc
        self.op = dispatcher.define(ns, schema, decl=self, tags=self.tags)
        self.name = name or self.op.schema.name
        self.explicit = explicit
        self.inplace_op = None
        self.out_op = None


DECLS = {}        # public name -> OpDecl (the functional overload)
BY_OP = {}        # 'aten::add.Tensor' -> OpDecl


def declare(schema, **kw):
    """Declare an operator; returns its OpOverload.

    >>> from ember._ops.registry import DECLS
    >>> DECLS['add'].op.name
    'aten::add.Tensor'
    """
    d = OpDecl(schema, **kw)
    BY_OP[d.op.name] = d
    DECLS.setdefault(d.name, d)
    if d.composite is not None:
        _register_tensor_kernel(d.op, DispatchKey.CompositeImplicitAutograd, d.composite)
    if d.kind == 'view':     # one kernel for every backend: views share storage, whatever the device
        from . import adapters
        d.explicit = True
        d.op.register(DispatchKey.CompositeExplicitAutograd, adapters.view_kernel(d.op, DispatchKey.CompositeExplicitAutograd))
    elif d.explicit is not None:
        _register_tensor_kernel(d.op, DispatchKey.CompositeExplicitAutograd, d.explicit)
    if d.inplace:
        d.inplace_op = dispatcher.define('aten', _inplace_schema(d.op.schema), decl=d, tags=d.tags + ('inplace',))
    if d.out:
        d.out_op = dispatcher.define('aten', _out_schema(d.op.schema), decl=d, tags=d.tags + ('out',))
    if d.composite is not None or d.explicit is not None:
        _register_variants(d, DispatchKey.CompositeImplicitAutograd if d.composite else DispatchKey.CompositeExplicitAutograd)
    return d.op


def _register_tensor_kernel(op, key, fn):
    k = lambda ks, *args: fn(*args)
    k.__qualname__ = getattr(fn, '__qualname__', 'composite')
    op.register(key, k)


def _register_variants(d, key):
    from . import adapters
    functional = d.op.kernels[key]
    if d.inplace_op is not None:
        d.inplace_op.register(key, adapters.inplace_kernel(d, functional))
    if d.out_op is not None:
        d.out_op.register(key, adapters.out_kernel(d, functional))


def _args_text(args, extra_kwonly=()):
    parts, kw = [], False
    for a in args:
        if a.kwarg_only and not kw:
            parts.append('*')
            kw = True
        parts.append(repr(a))
    if extra_kwonly:
        if not kw:
            parts.append('*')
        parts.extend(extra_kwonly)
    return ', '.join(parts)


def _inplace_schema(s):
    args = list(s.arguments)
    first = repr(args[0]).replace('Tensor ', 'Tensor(a!) ', 1)
    rest = _args_text(args[1:])
    ov = f'.{s.overload}' if s.overload else ''
    return f'{s.name}_{ov}({first}{", " + rest if rest else ""}) -> Tensor(a!)'


def _out_schema(s):
    n = len(s.returns)
    outs = ['Tensor(a!) out'] if n == 1 else [f'Tensor({chr(97 + i)}!) {nm}' for i, nm in enumerate(('values', 'indices', 'out2'))][:n]
    ret = 'Tensor(a!)' if n == 1 else '(' + ', '.join(f'Tensor({chr(97 + i)}!)' for i in range(n)) + ')'
    return f'{s.name}.{s.overload + "_out" if s.overload else "out"}({_args_text(s.arguments, outs)}) -> {ret}'
