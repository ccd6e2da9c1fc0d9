"""torch's ``powerSGD_hook``: PowerSGD gradient compression (Vogels et al., NeurIPS 2019,
https://arxiv.org/abs/1905.13727), the same algorithm on ember's collectives.

For the first ``start_powerSGD_iter`` iterations the bucket is averaged as by ``allreduce_hook``. After that
each gradient ``M`` (viewed as ``n x m``) worth compressing (``(n + m) * rank * min_compression_rate < n * m``)
is approximated by ``P Q^T`` of rank ``matrix_approximation_rank``; the others are averaged uncompressed:

1. ``M += error`` (error feedback: what the last compression lost), keep a copy of ``M``;
2. ``Q``: the last iteration's (warm start) or random, orthogonalized; ``P = M Q``;
3. all-reduce the uncompressed tensors and the ``P``s; orthogonalize ``P``; ``Q = M^T P``;
4. all-reduce the ``Q``s, divide by the world size; ``M = P Q^T``; ``error = copy - M``.

``batched_powerSGD_hook`` compresses the whole bucket as one square matrix (zero-padded) instead.

>>> # state = PowerSGDState(process_group=None, matrix_approximation_rank=1, start_powerSGD_iter=10)
>>> # ddp.register_comm_hook(state, powerSGD_hook)
"""
import logging
import math
from collections import defaultdict

import numpy as np

import ember
import ember.distributed as dist
from . import default_hooks as default

__all__ = ['PowerSGDState', 'powerSGD_hook', 'batched_powerSGD_hook']

logger = logging.getLogger(__name__)


def _orthogonalize(matrices, epsilon=0):
    """Orthonormalize the columns of each matrix of the batch ``matrices`` (b x n x r, r <= n) in place:
    Gram-Schmidt for rank <= 2 or half precision, QR otherwise (torch's choice)."""
    if not (len(matrices.shape) == 3 and matrices.shape[2] <= matrices.shape[1]):
        raise AssertionError
    if matrices.shape[2] <= 2 or matrices.dtype in (ember.float16, ember.bfloat16):
        _orthogonalize_gram_schmidt(matrices, epsilon=epsilon)
    else:
        matrices.copy_(ember.linalg.qr(matrices)[0])


def _orthogonalize_gram_schmidt(matrices, epsilon=0):
    for i in range(matrices.shape[2]):
        col = matrices[:, :, i:i + 1]
        col /= ember.norm(col, dim=1, keepdim=True) + epsilon if epsilon else ember.norm(col, dim=1, keepdim=True)
        if i + 1 < matrices.shape[2]:
            rest = matrices[:, :, i + 1:]
            rest -= ember.sum(col * rest, dim=1, keepdim=True) * col


def _should_compress(num_rows, num_cols, matrix_approximation_rank, min_compression_rate):
    """(compress?, numel uncompressed, numel compressed) of an ``num_rows x num_cols`` matrix."""
    uncompressed = num_rows * num_cols
    compressed = (num_rows + num_cols) * matrix_approximation_rank
    return compressed * min_compression_rate < uncompressed, uncompressed, compressed


def _report_compression_stats(bucket, state):
    if bucket.is_last() and state.iter >= state.next_stats_report:
        stats = state.compression_stats()
        logger.info("Compression stats: iter %s, total before compression %s, total after compression %s, rate %s",
                    state.iter, stats[1], stats[2], stats[0])
        state.next_stats_report = state.iter + state.compression_stats_logging_frequency


class PowerSGDState:
    """PowerSGD's configuration and the state it keeps between iterations, per bucket index: the local error
    (``error_dict``) and the last ``P``/``Q`` (``p_memory_dict``/``q_memory_dict``, for warm start)."""

    __slots__ = ['process_group', 'matrix_approximation_rank', 'start_powerSGD_iter', 'min_compression_rate',
                 'orthogonalization_epsilon', 'use_error_feedback', 'warm_start', 'batch_tensors_with_same_shape',
                 'rng', 'error_dict', 'p_memory_dict', 'q_memory_dict', 'iter', 'total_numel_before_compression',
                 'total_numel_after_compression', 'compression_stats_logging_frequency', 'next_stats_report']

    def __init__(self, process_group, matrix_approximation_rank=1, start_powerSGD_iter=1_000, min_compression_rate=2,
                 use_error_feedback=True, warm_start=True, orthogonalization_epsilon=0, random_seed=0,
                 compression_stats_logging_frequency=10_000, batch_tensors_with_same_shape=False):
        if (use_error_feedback or warm_start) and start_powerSGD_iter <= 1:
            raise ValueError("Expect `start_powerSGD_iter` > 1 if `use_error_feedback` or `warm_start` is enabled, "
                             "because PowerSGD can only be applied after the first two iterations in DDP.")
        self.process_group = process_group
        self.matrix_approximation_rank = matrix_approximation_rank
        self.start_powerSGD_iter = start_powerSGD_iter
        self.min_compression_rate = min_compression_rate
        self.use_error_feedback, self.warm_start = use_error_feedback, warm_start
        self.orthogonalization_epsilon = orthogonalization_epsilon
        self.rng = np.random.RandomState(random_seed)      # torch's: the seeds of Q's initial values
        self.error_dict, self.p_memory_dict, self.q_memory_dict = {}, {}, {}
        self.iter = 0
        self.total_numel_before_compression = self.total_numel_after_compression = 0
        self.compression_stats_logging_frequency = max(1, compression_stats_logging_frequency)
        self.next_stats_report = 0
        self.batch_tensors_with_same_shape = batch_tensors_with_same_shape

    def __getstate__(self):
        logger.warning("NOTE: Process group is not serializable and excluded from a saved state.")
        return {slot: getattr(self, slot) for slot in self.__slots__ if slot != 'process_group'}

    def __setstate__(self, state):
        self.process_group = dist.distributed_c10d._get_default_group()
        logger.warning("NOTE: Process group will be set to a default group (i.e. the world size). If a different "
                       "group is desired, please set `self.process_group` after PowerSGD state is loaded.")
        for slot, value in state.items():
            setattr(self, slot, value)

    def maybe_increase_iter(self, bucket):
        if bucket.is_last():
            self.iter += 1
        if self.iter == self.start_powerSGD_iter:
            logger.info("Start to apply PowerSGD after %s iterations.", self.iter)

    def compression_stats(self):
        """(compression rate, numel before compression, numel after)."""
        after = self.total_numel_after_compression
        rate = self.total_numel_before_compression / after if after > 0 else 0
        return rate, self.total_numel_before_compression, after


def _random_normal(state, shapes, dtype):
    """Standard normal tensors of ``shapes``, drawn one after another on the CPU generator seeded once from
    ``state.rng`` (torch's draws, so the same seed gives the same Qs)."""
    with ember.random.fork_rng(devices=[]):
        ember.manual_seed(state.rng.randint(1_000_000_000))
        return [ember.randn(*shape, dtype=dtype) for shape in shapes]


def _apply_error_feedback(state, index, tensor):
    """``tensor += error`` (a zero error the first time); a copy of the result, for the next error."""
    if not state.use_error_feedback:
        return None
    if index in state.error_dict:
        tensor.add_(state.error_dict[index])
    else:
        logger.info("A zero tensor of length %s that represents local error is created.", tensor.shape[0])
        state.error_dict[index] = ember.zeros(tensor.shape[0], dtype=tensor.dtype)
    return tensor.detach().clone()


def _split_by_compression(state, tensors):
    """(matrices to compress, tensors to average as they are, total numel of the Ps, of the Qs)."""
    to_compress, uncompressed, ps_size, qs_size = [], [], 0, 0
    for tensor in tensors:
        matrix = tensor.view(tensor.shape[0], -1)
        n, m = matrix.shape
        rank = min(n, m, state.matrix_approximation_rank)
        compress, before, after = _should_compress(n, m, rank, state.min_compression_rate)
        state.total_numel_before_compression += before
        if compress:
            to_compress.append(matrix)
            ps_size, qs_size = ps_size + n * rank, qs_size + m * rank
            state.total_numel_after_compression += after
        else:
            uncompressed.append(tensor)
            state.total_numel_after_compression += before
    return to_compress, uncompressed, ps_size, qs_size


def _batches(state, shape_to_tensors):
    """The matrices as batches (b x n x m): one per matrix, or one per shape with batch_tensors_with_same_shape."""
    for tensors in shape_to_tensors.values():
        if state.batch_tensors_with_same_shape and len(tensors) > 1:
            yield ember.stack(tensors)
        elif state.batch_tensors_with_same_shape:
            yield tensors[0].unsqueeze(0)
        else:
            yield from (t.unsqueeze(0) for t in tensors)


def _low_rank_views(state, index, batches):
    """Views of the bucket's flat P and Q memories, ``b x n x r`` and ``b x m x r`` per batch."""
    ps, qs, p_idx, q_idx = [], [], 0, 0
    for tensor in batches:
        b, n, m = tensor.shape
        r = min(n, m, state.matrix_approximation_rank)
        ps.append(state.p_memory_dict[index][p_idx:p_idx + b * n * r].view(b, n, r))
        qs.append(state.q_memory_dict[index][q_idx:q_idx + b * m * r].view(b, m, r))
        p_idx, q_idx = p_idx + b * n * r, q_idx + b * m * r
    return ps, qs


def _begin(state, bucket):
    """(group, its size, the bucket's tensor, a Future of a plain all-reduce before ``start_powerSGD_iter`` or
    None): what both hooks do first."""
    group = state.process_group if state.process_group is not None else dist.group.WORLD
    tensor = bucket.buffer()
    warm_up = None
    if state.iter < state.start_powerSGD_iter:
        state.maybe_increase_iter(bucket)
        warm_up = default._allreduce_fut(group, tensor)
    return group, dist.get_world_size(group), tensor, warm_up


def _end(state, bucket, index, input_tensor_cp, input_tensor):
    """What both hooks do last: keep the error for feedback, drop the memories without warm start, count."""
    if state.use_error_feedback:
        state.error_dict[index] = input_tensor_cp - input_tensor
    if not state.warm_start:
        state.p_memory_dict.clear()
        state.q_memory_dict.clear()
    state.maybe_increase_iter(bucket)


def powerSGD_hook(state, bucket):
    """Average the bucket with PowerSGD (see the module's docstring): a Future of the bucket's tensor."""
    group, world_size, input_tensor, warm_up = _begin(state, bucket)
    if warm_up is not None:
        return warm_up
    dtype, index = input_tensor.dtype, bucket.index()
    input_tensor_cp = _apply_error_feedback(state, index, input_tensor)
    matrices, uncompressed, ps_size, qs_size = _split_by_compression(state, bucket.gradients())
    _report_compression_stats(bucket, state)
    uncompressed_memory = ember.cat([t.view(-1) for t in uncompressed]) if uncompressed \
        else ember.tensor([], dtype=dtype)
    need_randomize_qs = not state.warm_start or index not in state.p_memory_dict
    if need_randomize_qs:
        state.p_memory_dict[index] = ember.empty(ps_size, dtype=dtype)
        state.q_memory_dict[index] = ember.empty(qs_size, dtype=dtype)
    shape_to_tensors = defaultdict(list)
    for matrix in matrices:
        shape_to_tensors[matrix.shape].append(matrix)
    batches = list(_batches(state, shape_to_tensors))
    ps, qs = _low_rank_views(state, index, batches)
    with ember.no_grad():
        if need_randomize_qs:
            for q, values in zip(qs, _random_normal(state, [q.shape for q in qs], dtype)):
                q.copy_(values)
        for q in qs:
            _orthogonalize(q, state.orthogonalization_epsilon)
        for tensor, q, p in zip(batches, qs, ps):
            ember.bmm(tensor, q, out=p)
    fut = dist.all_reduce(uncompressed_memory, group=group, async_op=True).get_future()

    def unpack_uncompressed_tensors_and_allreduce_ps(fut):
        memory = fut.value()[0].div_(world_size)
        idx = 0
        for tensor in uncompressed:
            tensor.copy_(memory[idx:idx + tensor.numel()].view_as(tensor))
            idx += tensor.numel()
        return dist.all_reduce(state.p_memory_dict[index], group=group, async_op=True).get_future().wait()[0]

    def compute_qs(fut):
        state.p_memory_dict[index] = fut.value()
        for p in ps:
            _orthogonalize(p, state.orthogonalization_epsilon)
        for tensor, p, q in zip(batches, ps, qs):
            ember.bmm(tensor.transpose(1, 2), p, out=q)
        return dist.all_reduce(state.q_memory_dict[index], group=group, async_op=True).get_future().wait()[0]

    def decompress(fut):
        state.q_memory_dict[index] = fut.value().div_(world_size)
        for p, q, tensor in zip(ps, qs, batches):
            ember.bmm(p, q.transpose(1, 2), out=tensor)
        if state.batch_tensors_with_same_shape:       # a stacked batch is a copy: write it back
            for tensor in batches:
                if tensor.shape[0] > 1:
                    for i, original in enumerate(shape_to_tensors[tensor.shape[1:]]):
                        original.copy_(tensor[i])
        _end(state, bucket, index, input_tensor_cp, input_tensor)
        return input_tensor

    return fut.then(_no_grad(unpack_uncompressed_tensors_and_allreduce_ps)).then(_no_grad(compute_qs)) \
        .then(_no_grad(decompress))


def _no_grad(fn):
    def run(fut):
        with ember.no_grad():
            return fn(fut)
    return run


def batched_powerSGD_hook(state, bucket):
    """PowerSGD on the whole bucket viewed as one square matrix (zero-padded): fewer, larger products, a coarser
    approximation. A Future of the bucket's values (torch resizes the bucket's own tensor to the padded
    length and back; ember pads a copy, so the bucket's views stay valid)."""
    group, world_size, bucket_tensor, warm_up = _begin(state, bucket)
    if warm_up is not None:
        return warm_up
    total_length = bucket_tensor.shape[0]
    state.total_numel_before_compression += total_length
    side = math.ceil(math.sqrt(total_length))
    state.total_numel_after_compression += side * state.matrix_approximation_rank * 2
    input_tensor = ember.zeros(side ** 2, dtype=bucket_tensor.dtype)
    input_tensor[:total_length].copy_(bucket_tensor)
    _report_compression_stats(bucket, state)
    index = bucket.index()
    input_tensor_cp = _apply_error_feedback(state, index, input_tensor)
    matrix = input_tensor.view(side, side)
    if not state.warm_start or index not in state.p_memory_dict:
        shape = (side, state.matrix_approximation_rank)
        state.p_memory_dict[index] = ember.empty(*shape, dtype=input_tensor.dtype)
        state.q_memory_dict[index] = _random_normal(state, [shape], input_tensor.dtype)[0]
    with ember.no_grad():
        _orthogonalize(state.q_memory_dict[index].unsqueeze(0))
        ember.matmul(matrix, state.q_memory_dict[index], out=state.p_memory_dict[index])
    fut = dist.all_reduce(state.p_memory_dict[index], group=group, async_op=True).get_future()

    def compute_q(fut):
        state.p_memory_dict[index] = fut.value()[0]
        _orthogonalize(state.p_memory_dict[index].unsqueeze(0))
        ember.matmul(matrix.t(), state.p_memory_dict[index], out=state.q_memory_dict[index])
        return dist.all_reduce(state.q_memory_dict[index], group=group, async_op=True).get_future().wait()[0]

    def decompress(fut):
        state.q_memory_dict[index] = fut.value().div_(world_size)
        ember.matmul(state.p_memory_dict[index], state.q_memory_dict[index].t(), out=matrix)
        _end(state, bucket, index, input_tensor_cp, input_tensor)
        return input_tensor[:total_length]

    return fut.then(_no_grad(compute_q)).then(_no_grad(decompress))
