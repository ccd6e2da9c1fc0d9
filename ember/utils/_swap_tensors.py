"""``swap_tensors(t1, t2)``: exchange everything two Tensor objects are, keeping each Python object's identity.

A torch Tensor is a Python object over a C++ TensorImpl; torch swaps the class, the ``__dict__``, the slots and
then the impl pointers (``torch._C._swap_tensor_impl``). ember does the same: its tensor's state (array, dtype,
device, version counter, requires_grad, grad, hooks, autograd bookkeeping) lives in fields that
``ember._C._swap_tensor_impl`` exchanges (NOTE [tensor __dict__]).

What ember does not check: torch refuses a tensor whose impl has other owners (``t._use_count() > 1``, e.g. a
tensor with a live view); ember has no such count it may rely on (ARCHITECTURE rule 9: no decision on reference
counts), so a view taken before the swap keeps its data but names the swapped object as its ``_base``.
"""
import copyreg
import weakref

__all__ = ['swap_tensors']

def swap_tensors(t1, t2):
    """Swap the contents of two Tensors in place: data, dtype, shape, device, requires_grad, grad, Python
    attributes (``__dict__``), slots and class. Every reference to ``t1`` then sees what ``t2`` was, and back.

    Raises RuntimeError, as torch's, when either has a weak reference, or when their classes' ``__slots__``
    differ. A graph that would accumulate a gradient into either (a backward pass recorded before the swap) fails
    when run.

    >>> import ember
    >>> a, b = ember.zeros(2), ember.ones(3, dtype=ember.float64, requires_grad=True)
    >>> ember.utils.swap_tensors(a, b)
    >>> a.shape, a.dtype, a.requires_grad, b.shape
    (ember.Size([3]), ember.float64, True, ember.Size([2]))
    """
    from ..import Tensor
    for t, name in ((t1, 't1'), (t2, 't2')):
        if not isinstance(t, Tensor):
            raise TypeError(f"swap_tensors(): expected {name} to be a Tensor, but got {type(t).__name__}")
    if weakref.getweakrefs(t1):
        raise RuntimeError("Cannot swap t1 because it has weakref associated with it")
    if weakref.getweakrefs(t2):
        raise RuntimeError("Cannot swap t2 because it has weakref associated with it")
    t1_slots = set(copyreg._slotnames(t1.__class__))
    t2_slots = set(copyreg._slotnames(t2.__class__))
    if t1_slots != t2_slots:
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    if t1 is t2:
        return

    def swap_attr(name):
        tmp = getattr(t1, name)
        setattr(t1, name, getattr(t2, name))
        setattr(t2, name, tmp)

    swap_attr('__class__')
    d1, d2 = dict(t1.__dict__), dict(t2.__dict__)     # the Python attributes (assigning __dict__ directly is refused
    #                                                   by some subclasses)
    t1.__dict__.clear()
    t1.__dict__.update(d2)
    t2.__dict__.clear()
    t2.__dict__.update(d1)
    for slot in t1_slots:
        if hasattr(t1, slot) and hasattr(t2, slot):
            swap_attr(slot)
        elif hasattr(t1, slot):
            setattr(t2, slot, getattr(t1, slot))
            delattr(t1, slot)
        elif hasattr(t2, slot):
            setattr(t1, slot, getattr(t2, slot))
            delattr(t2, slot)
    from .. import _C
    _C._swap_tensor_impl(t1, t2)
    # the contents moved with their dispatch keys; the key handing calls to __torch_function__ belongs to the class
    # each object now has (torchtune's FrozenNF4Linear swaps a plain weight for an NF4Tensor)
    t1.__class__, t2.__class__ = type(t1), type(t2)
