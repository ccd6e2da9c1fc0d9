"""ember._functorch: the machinery under ember.func's vmap (torch._functorch's counterpart): BatchedTensor and the
FuncTorchBatched kernels (batching.py)."""
import contextlib
import threading


# NOTE [functorch transform stack]: the ember.func transforms running on this thread, outermost first: torch's
# functorch interpreter stack, which torch._C._are_functorch_transforms_active() reports on. vmap pushes 'vmap' per
# level (batching.push_level); grad, vjp and jacrev push 'grad', jvp and jacfwd 'jvp', functionalize 'functionalize'.
# A plain autograd.forward_ad.dual_level() or a dispatch mode a user enters is no transform, as in torch.
class _Transforms(threading.local):
    def __init__(self):
        self.stack = []


TRANSFORMS = _Transforms()


@contextlib.contextmanager
def transform(kind):
    """Mark a transform of kind ``kind`` running while the block runs (NOTE [functorch transform stack])."""
    TRANSFORMS.stack.append(kind)
    try:
        yield
    finally:
        TRANSFORMS.stack.pop()
