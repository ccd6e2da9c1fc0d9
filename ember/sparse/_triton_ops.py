"""torch.sparse._triton_ops: the helpers torch's Triton kernels for block-sparse (BSR) products share. The
argument checks and the tensor reshaping helpers are plain tensor code and work here; the kernels themselves need
Triton, which ember has not (``ember.utils._triton.has_triton()`` is False), so torchao and torch take their
eager paths.

>>> import ember
>>> from ember.sparse._triton_ops import broadcast_batch_dims, tile_to_blocksize
>>> broadcast_batch_dims('f', ember.ones(2, 1, 3, 4), ember.ones(5, 4, 6))
ember.Size([2, 5])
>>> tile_to_blocksize(ember.ones(4, 6), (2, 3)).shape
ember.Size([2, 2, 2, 3])
"""
import itertools

import ember
from ..utils._triton import has_triton  # noqa: F401
from .._dynamo.utils import warn_once  # noqa: F401

__all__ = ['check', 'check_bsr_layout', 'check_device', 'check_mm_compatible_shapes', 'check_dtype',
           'check_blocksize', 'make_triton_contiguous', 'broadcast_batch_dims', 'slicer', 'multidim_slicer',
           'ptr_stride_extractor', 'grid_partitioner', 'launch_kernel', 'prepare_inputs', 'tile_to_blocksize',
           'as1Dbatch']


def check(cond, msg):
    if not cond:
        raise ValueError(msg)


def check_bsr_layout(f_name, t):
    check(t.layout == ember.sparse_bsr, f"{f_name}(): only BSR sparse format is supported for the sparse argument.")


def check_device(f_name, t, device):
    check(t.device == device and t.device.type in ('cuda', 'xpu'),
          f"{f_name}(): all inputs are expected to be on the same GPU device.")


def check_mm_compatible_shapes(f_name, lhs, rhs):
    check(lhs.dim() >= 2 and rhs.dim() >= 2,
          f"{f_name}(): all inputs involved in the matrix product are expected to be at least 2D, "
          f"but got lhs.dim() == {lhs.dim()} and rhs.dim() == {rhs.dim()}.")
    kl, kr = lhs.shape[-1], rhs.shape[-2]
    check(kl == kr, f"{f_name}(): arguments' sizes involved in the matrix product are not compatible for matrix "
                    f"multiplication, got lhs.shape[-1] == {kl} which is not equal to rhs.shape[-2] == {kr}.")


def check_dtype(f_name, t, dtype, *additional_dtypes):
    check(t.dtype == dtype and t.dtype in ((ember.half, ember.bfloat16, ember.float) + tuple(*additional_dtypes)),
          f"{f_name}(): all inputs are expected to be of the same dtype and one of (half, bfloat16, float32) or "
          f"{additional_dtypes}, but got dtype == {t.dtype}.")


def check_blocksize(f_name, blocksize):
    if len(blocksize) != 2:
        raise AssertionError(f"blocksize must have length 2, got {len(blocksize)}")
    # Triton loads only blocks of at least 16 elements whose sizes are powers of 2
    ok = all(b >= 16 and not (b & (b - 1)) for b in blocksize)
    check(ok, f"{f_name}(): sparse inputs' blocksize ({blocksize[0]}, {blocksize[1]}) "
              "should be at least 16 and a power of 2 in each dimension.")


def make_triton_contiguous(t):
    """``t`` itself when some stride is at most 1, else a contiguous copy (Triton copies element by element
    otherwise)."""
    return t.contiguous() if min(t.stride()) > 1 else t


def broadcast_batch_dims(f_name, *tensors):
    """The broadcast shape of the tensors' batch dimensions (all but the last two)."""
    try:
        return ember.broadcast_shapes(*(t.shape[:-2] for t in tensors))
    except Exception:
        check(False, f"{f_name}(): inputs' batch dimensions are not broadcastable!")


def slicer(dim, slice_range, *tensors):
    for t in tensors:
        slices = [slice(None)] * t.dim()
        slices[dim] = slice_range
        yield t[slices]


def multidim_slicer(dims, slices, *tensors):
    for t in tensors:
        s = [slice(None)] * t.dim()
        for d, d_slice in zip(dims, slices):
            if d is not None:
                s[d] = d_slice
        yield t[tuple(s)]


def ptr_stride_extractor(*tensors):
    for t in tensors:
        yield t
        yield from t.stride()


def grid_partitioner(full_grid, grid_blocks, tensor_dims_map):
    """Split a launch grid into blocks no larger than ``grid_blocks``, yielding each block's grid (reversed, as
    CUDA orders it) and the slices of the tensors it covers."""
    if len(full_grid) > 3:
        raise AssertionError(f"full_grid length must be 0-3, got {len(full_grid)}")
    if len(grid_blocks) > 3:
        raise AssertionError(f"grid_blocks length must be 0-3, got {len(grid_blocks)}")
    points = (range(0, fg, mg) for fg, mg in zip(full_grid, grid_blocks))
    for grid_point in itertools.product(*points):
        grid = [min(fg - gp, mg) for fg, gp, mg in zip(full_grid, grid_point, grid_blocks)]
        slices = [slice(gp, gp + g) for gp, g in zip(grid_point, grid)]
        yield grid[::-1], *(next(multidim_slicer(dims, slices, t)) for t, dims in tensor_dims_map.items())


def launch_kernel(kernel, tensor_dims_map, full_grid, grid_blocks=None):
    """Call ``kernel(grid, *sliced_tensors)`` once per block of a grid CUDA's limits allow."""
    cuda_max_grid = (2147483647, 65535, 65535)[::-1]
    if grid_blocks is None:
        grid_blocks = cuda_max_grid
    else:
        grid_blocks = tuple(mg if g is None else max(1, min(g, mg)) for g, mg in zip(grid_blocks, cuda_max_grid))
    for grid, *sliced_tensors in grid_partitioner(full_grid, grid_blocks, tensor_dims_map):
        kernel(grid, *sliced_tensors)


def prepare_inputs(bsr, *dense_tensors):
    """A BSR tensor's indices and values and the dense operands, their batch dimensions broadcast together and
    flattened into one (added when absent)."""
    crow_indices = bsr.crow_indices().unsqueeze(0)
    col_indices = bsr.col_indices().unsqueeze(0)
    values = make_triton_contiguous(bsr.values().unsqueeze(0))
    tensors = [make_triton_contiguous(t.unsqueeze(0)) for t in dense_tensors]
    batch = ember.broadcast_shapes(values.shape[:-3], *(t.shape[:-2] for t in tensors))

    def squash(t, invariant_dims):
        return t.broadcast_to(batch + tuple(invariant_dims)).flatten(0, len(batch) - 1)

    return (squash(crow_indices, (-1,)), squash(col_indices, (-1,)), squash(values, values.shape[-3:]),
            *(squash(t, t.shape[-2:]) for t in tensors))


def tile_to_blocksize(t, blocksize):
    """A view of ``t`` (..., m, n) as (..., m // b0, n // b1, b0, b1) tiles."""
    *rest, m, n = t.shape
    new_shape = rest + [m // blocksize[0], blocksize[0], n // blocksize[1], blocksize[1]]
    return t.view(new_shape).transpose(-3, -2)      # view, not reshape: the tiles must alias t


def as1Dbatch(tensor):
    """``tensor`` with its batch dimensions (all but the last two) flattened into one."""
    while tensor.dim() < 3:
        tensor = tensor.unsqueeze(0)
    return tensor.flatten(0, tensor.dim() - 3)
