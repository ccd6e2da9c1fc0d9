"""torch.sparse.semi_structured: 2:4 semi-structured sparse tensors (two nonzeros in every four), whose products
run on NVIDIA's sparse tensor cores through CUTLASS or cuSPARSELt kernels.

torch makes them from CUDA tensors only (a CPU tensor raises); ember has neither kernel library, so making one
raises on every device. The classes exist for ``isinstance`` checks and for libraries that import them
(torchao's sparsity modules).
"""
import ember

__all__ = ['SparseSemiStructuredTensor', 'SparseSemiStructuredTensorCUTLASS', 'SparseSemiStructuredTensorCUSPARSELT',
           'to_sparse_semi_structured']


def _unsupported(device):
    if device.type != 'cuda':
        return RuntimeError(f"Error original_tensor.device= {device} is not supported! Only CUDA tensors are "
                            f"currently supported.")
    return NotImplementedError("semi-structured (2:4) sparse tensors need CUTLASS or cuSPARSELt kernels, which "
                               "ember does not have")


class SparseSemiStructuredTensor(ember.Tensor):
    """A 2:4 sparse matrix: compressed values and metadata (``packed``, ``meta``) and their transposes."""
    _FORCE_CUTLASS = False
    _FUSE_TRANSPOSE = False
    _PROTOTYPE_WARNING_SHOWN = False
    BACKEND = None
    SPARSE_DISPATCH = None

    def __new__(cls, shape, packed, meta, packed_t, meta_t, compressed_swizzled_bitmask, fuse_transpose_cusparselt=False,
                alg_id_cusparselt=0, requires_grad=False):
        raise _unsupported((packed if packed is not None else packed_t).device)

    @classmethod
    def from_dense(cls, original_tensor):
        raise _unsupported(original_tensor.device)


class SparseSemiStructuredTensorCUTLASS(SparseSemiStructuredTensor):
    BACKEND = 'cutlass'


class SparseSemiStructuredTensorCUSPARSELT(SparseSemiStructuredTensor):
    BACKEND = 'cusparselt'


def to_sparse_semi_structured(original_tensor, transposed=False):
    """The 2:4 sparse form of a dense CUDA matrix (not available in ember: the module docstring)."""
    if transposed:
        raise DeprecationWarning("Setting transpose from `to_sparse_semi_structured` is deprecated and will be "
                                 "removed in a future release. `SparseSemiStructuredTensor` only support contiguous "
                                 "input tensors.")
    cls = SparseSemiStructuredTensorCUTLASS if SparseSemiStructuredTensor._FORCE_CUTLASS else \
        SparseSemiStructuredTensorCUSPARSELT
    return cls.from_dense(original_tensor)
