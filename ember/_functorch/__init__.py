"""ember._functorch: the machinery under ember.func's vmap (torch._functorch's counterpart): BatchedTensor and the
FuncTorchBatched kernels (batching.py)."""
