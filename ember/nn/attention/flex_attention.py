"""``torch.nn.attention.flex_attention``: attention whose scores a Python function rewrites (``score_mod``) and
whose pattern a predicate on positions describes (``mask_mod``, carried by a ``BlockMask``).

ember computes it as torch's eager path does (torch runs it through the ``eager`` compile backend into its
math reference): the whole score matrix in float32 (float64 for float64 inputs), ``score_mod`` and
``mask_mod`` evaluated over every (batch, head, q_idx, kv_idx) at once, a softmax that gives 0 to rows with no
allowed key (their logsumexp is -inf), and the probabilities cast to the query's dtype before they meet the
values. The modifications are called once, on index tensors shaped to broadcast against the scores
(``b``: (B,1,1,1), ``h``: (1,H,1,1), ...), so tensors they capture and index (``bias[q_idx - kv_idx]``,
``slopes[h]``) are read with one advanced index and autograd reaches them; a function that elementwise
broadcasting does not fit (one that reduces or needs 0-d arguments) is run under ``ember.func.vmap`` over the
four index dimensions instead, as torch runs every one.

Where ember does more than torch on a CPU-only build: gradients flow (torch raises for CPU inputs that require
grad), ``AuxRequest(max_scores=True)`` is answered (torch: NotImplementedError on CPU), a BlockMask on another
device than the query is moved to it, and ``create_block_mask(device='cuda')`` in a process without CUDA
builds the mask on the CPU with a warning (torch: "Torch not compiled with CUDA enabled"). Where it differs:
the block structure of a BlockMask is honoured along with its ``mask_mod``, as torch's compiled kernels do
(an empty block is skipped, a full one is not masked); torch's eager path reads only ``mask_mod``. For masks
from ``create_block_mask`` the two agree. ``kernel_options`` tune torch's Triton kernels and are ignored.

>>> import ember
>>> bm = create_block_mask(lambda b, h, q, kv: q >= kv, None, None, 4, 4, device='cpu', BLOCK_SIZE=2)
>>> bm.kv_num_blocks, bm.full_kv_num_blocks
(tensor([[[1, 1]]], dtype=ember.int32), tensor([[[0, 1]]], dtype=ember.int32))
>>> q = ember.ones(1, 1, 4, 2)
>>> flex_attention(q, q, q, block_mask=bm).shape
ember.Size([1, 1, 4, 2])
"""
import inspect
import itertools
import math
from typing import Callable, NamedTuple, Optional, TypedDict

import ember
from ember import Tensor
from ..._warn import warnings

__all__ = ['BlockMask', 'flex_attention', 'AuxOutput', 'AuxRequest', 'FlexKernelOptions', 'create_block_mask',
           'create_mask', 'or_masks', 'and_masks', 'noop_mask']

_score_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor]
_mask_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_WARNED = set()


class FlexKernelOptions(TypedDict, total=False):
    """Options of torch's fused kernels (block sizes, warps, backend); ember's dense path has nothing to tune."""


class AuxRequest(NamedTuple):
    """Which auxiliary outputs ``flex_attention(..., return_aux=...)`` returns."""
    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """The auxiliary outputs asked for; None for those not asked."""
    lse: Optional[Tensor] = None
    max_scores: Optional[Tensor] = None


def _warn_once(key, message, category=UserWarning):
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, category, stacklevel=3)


def noop_mask(batch, head, token_q, token_kv):
    """The mask_mod that allows everything."""
    return batch.new_ones(size=(), dtype=ember.bool, device=batch.device)


def _sliced_mask_mod_error(batch, head, token_q, token_kv):
    """The mask_mod of a sliced BlockMask: its positions no longer match the original's, so it may not be used."""
    raise RuntimeError("Cannot use mask_mod from a sliced BlockMask. When you slice a BlockMask using [], the "
                       "mask_mod attribute is reset. You must set it from the original BlockMask's mask_mod.")


def or_masks(*mask_mods):
    """The mask_mod allowing what any of ``mask_mods`` allows."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b, h, q_idx, kv_idx):
        result = b.new_zeros((), dtype=ember.bool)
        for m in mask_mods:
            result = result | m(b, h, q_idx, kv_idx)
        return result
    return or_mask


def and_masks(*mask_mods):
    """The mask_mod allowing what all of ``mask_mods`` allow."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b, h, q_idx, kv_idx):
        result = b.new_ones((), dtype=ember.bool)
        for m in mask_mods:
            result = result & m(b, h, q_idx, kv_idx)
        return result
    return and_mask


def _num_positional(fn):
    """Positional parameters without defaults: 5 for a score_mod, 4 for a mask_mod (how torch tells them apart)."""
    n = sum(1 for p in inspect.signature(fn).parameters.values()
            if p.default is inspect.Parameter.empty
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    if n not in (4, 5):
        raise AssertionError(f"Expected 4 or 5 positional args, got {n}")
    return n


def _apply_mod(fn, lead, sizes, device):
    """``fn(*lead, b, h, q_idx, kv_idx)`` over all of ``sizes`` = (B, H, L, S); ``lead`` is () or (scores,).

    First on broadcasting index tensors (one call, the fast path); when that raises or gives a result that does
    not broadcast to ``sizes``, under four nested vmaps, each index a 0-d tensor as torch's reference has it."""
    idx = [ember.arange(n, device=device) for n in sizes]
    shaped = [i.view([-1 if d == k else 1 for d in range(4)]) for k, i in enumerate(idx)]
    try:
        out = fn(*lead, *shaped)
        if isinstance(out, Tensor) and out.dim() <= 4 and all(
                o in (1, n) for o, n in zip(out.shape, sizes[4 - out.dim():])):
            return out
    except Exception:       # noqa: BLE001  not elementwise: vmap runs it as torch does, and raises its own errors
        pass
    from ...func import vmap
    for d in (3, 2, 1, 0):
        fn = vmap(fn, in_dims=(0,) * len(lead) + tuple(0 if k == d else None for k in range(4)))
    return fn(*lead, *idx)


def _resolve_device(device):
    """torch's default (the current accelerator, else the CPU); a device type this process lacks means the CPU."""
    if device is None:
        return ember.accelerator.current_accelerator() or ember.device('cpu')
    device = ember.device(device)
    backend = getattr(ember, device.type, None)
    if device.type != 'cpu' and hasattr(backend, 'is_available') and not backend.is_available():
        _warn_once(('device', device.type), f"flex_attention: no {device.type} device in this process; the mask "
                   f"is built on the CPU (torch raises here) and moved to the tensors' device when used")
        return ember.device('cpu')
    return device


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None):
    """The dense (B, H, Q_LEN, KV_LEN) boolean mask of a mask_mod, or of a score_mod (True where it is not -inf
    on zero scores). B or H None: 1."""
    device = _resolve_device(device)
    sizes = (B or 1, H or 1, Q_LEN, KV_LEN)
    if _num_positional(mod_fn) == 5:
        out = _apply_mod(mod_fn, (ember.zeros(sizes, device=device),), sizes, device)
        return (~ember.isneginf(out)).expand(sizes).contiguous()
    return _apply_mod(mod_fn, (), sizes, device).expand(sizes).contiguous()


def _dense_to_ordered(dense):
    """Per row, the count of set blocks and all column indices, the set ones first, each group ascending."""
    dense = dense.to(ember.int32)
    order = ember.argsort(dense, dim=-1, descending=True, stable=True)
    return dense.sum(-1).to(ember.int32), order.to(ember.int32)


def _ordered_to_dense(num_blocks, indices, num_cols):
    """The (..., rows, num_cols) int32 block matrix: 1 at the first ``num_blocks`` entries of each row's indices."""
    valid = ember.arange(indices.shape[-1], device=indices.device) < num_blocks.unsqueeze(-1)
    cols = ember.where(valid, indices.long(), num_cols)     # the rest go to a spare column, dropped below
    dense = ember.zeros(*indices.shape[:-1], num_cols + 1, dtype=ember.int32, device=indices.device)
    return dense.scatter_(-1, cols, 1)[..., :num_cols].contiguous()


def _transpose_ordered(num_blocks, indices):
    """The column-major form (per KV block, its Q blocks), which torch's backward kernels walk."""
    dense = _ordered_to_dense(num_blocks, indices, indices.shape[-1])
    return _dense_to_ordered(dense.transpose(-2, -1))


class BlockMask:
    """A block-sparse attention mask: per (batch, head, Q block), the KV blocks that hold any allowed position
    (``kv_num_blocks``, ``kv_indices``: the valid ones first) and, optionally, those whose positions are all
    allowed (``full_kv_*``, which need no ``mask_mod``); ``q_*`` are the same by KV block. ``BLOCK_SIZE`` is
    (Q_BLOCK_SIZE, KV_BLOCK_SIZE); ``seq_lengths`` the (Q_LEN, KV_LEN) it was made for."""

    def __init__(self, seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices, q_num_blocks,
                 q_indices, full_q_num_blocks, full_q_indices,
                 BLOCK_SIZE=(_DEFAULT_SPARSE_BLOCK_SIZE, _DEFAULT_SPARSE_BLOCK_SIZE), mask_mod=noop_mask):
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        if (full_q_num_blocks is None) != (full_q_indices is None):
            raise AssertionError("full_q_num_blocks and full_q_indices must be both provided or omitted")
        self.seq_lengths = tuple(seq_lengths)
        self.kv_num_blocks, self.kv_indices = kv_num_blocks, kv_indices
        self.full_kv_num_blocks, self.full_kv_indices = full_kv_num_blocks, full_kv_indices
        self.q_num_blocks, self.q_indices = q_num_blocks, q_indices
        self.full_q_num_blocks, self.full_q_indices = full_q_num_blocks, full_q_indices
        self.BLOCK_SIZE = tuple(BLOCK_SIZE)
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks, kv_indices, full_kv_num_blocks=None, full_kv_indices=None,
                       BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE, mask_mod=None, seq_lengths=None,
                       compute_q_blocks=True):
        """A BlockMask from its KV-major tensors; the Q-major ones are derived (unless ``compute_q_blocks`` is
        False), ``seq_lengths`` defaults to the block grid times BLOCK_SIZE."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        q_num, q_idx = _transpose_ordered(kv_num_blocks, kv_indices) if compute_q_blocks else (None, None)
        full_q_num, full_q_idx = (_transpose_ordered(full_kv_num_blocks, full_kv_indices)
                                  if compute_q_blocks and full_kv_num_blocks is not None else (None, None))
        if isinstance(BLOCK_SIZE, int):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * BLOCK_SIZE[0], kv_indices.shape[-1] * BLOCK_SIZE[1])
        return cls(seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices, q_num, q_idx,
                   full_q_num, full_q_idx, BLOCK_SIZE=BLOCK_SIZE,
                   mask_mod=mask_mod if mask_mod is not None else noop_mask)

    @property
    def shape(self):
        return tuple(self.kv_indices.shape[:-2]) + self.seq_lengths

    def numel(self):
        """Positions in the mask, sparsity not counted."""
        return math.prod(self.shape)

    def sparsity(self):
        """Percentage of the positions in blocks that are skipped (negative where the blocks overhang the
        sequences, as torch's)."""
        computed = self.kv_num_blocks.sum().item()
        if self.full_kv_num_blocks is not None:
            computed += self.full_kv_num_blocks.sum().item()
        return 100 * (1 - computed * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1] / self.numel())

    def to_dense(self):
        """The (..., Q blocks, KV blocks) int32 matrix of the blocks computed (partial or full)."""
        dense = _ordered_to_dense(self.kv_num_blocks, self.kv_indices, self.kv_indices.shape[-1])
        if self.full_kv_num_blocks is not None:
            dense = dense | _ordered_to_dense(self.full_kv_num_blocks, self.full_kv_indices,
                                              self.full_kv_indices.shape[-1])
        return dense

    def _allowed(self, sizes, device):
        """The (B, H, L, S) positions flex_attention may attend to: full blocks, and partial blocks where
        mask_mod allows (torch's kernel's rule)."""
        Q_BLOCK, KV_BLOCK = self.BLOCK_SIZE
        L, S = sizes[2:]

        def positions(num_blocks, indices):
            d = _ordered_to_dense(num_blocks, indices, indices.shape[-1]).to(device).bool()
            d = d.view((1,) * (4 - d.dim()) + tuple(d.shape))
            return d.repeat_interleave(Q_BLOCK, -2)[..., :L, :].repeat_interleave(KV_BLOCK, -1)[..., :S]

        allowed = positions(self.kv_num_blocks, self.kv_indices)
        if self.mask_mod is not noop_mask:
            allowed = allowed & _apply_mod(self.mask_mod, (), sizes, device)
        if self.full_kv_num_blocks is not None:
            allowed = allowed | positions(self.full_kv_num_blocks, self.full_kv_indices)
        return allowed

    def __getitem__(self, index):
        """The mask of the chosen batches, heads and Q blocks; an int keeps its dimension, as torch's; the
        result's mask_mod refuses to be used (its positions no longer line up)."""
        index = index if isinstance(index, tuple) else (index,)
        sizes = self.kv_num_blocks.shape[:3]
        index = tuple(slice(i % n, i % n + 1) if isinstance(i, int) else i
                      for i, n in zip((*index, slice(None), slice(None), slice(None))[:len(sizes)], sizes))
        full = self.full_kv_num_blocks
        return BlockMask.from_kv_blocks(
            self.kv_num_blocks[index], self.kv_indices[index], None if full is None else full[index],
            None if full is None else self.full_kv_indices[index], BLOCK_SIZE=self.BLOCK_SIZE,
            mask_mod=_sliced_mask_mod_error, seq_lengths=self.seq_lengths,
            compute_q_blocks=self.q_indices is not None)

    def _adjust(self, new_q_len, new_kv_len):
        """The mask cropped to its upper-left (new_q_len, new_kv_len) corner, for a shorter sequence."""
        rows = -(-new_q_len // self.BLOCK_SIZE[0])
        cols = -(-new_kv_len // self.BLOCK_SIZE[1])

        def crop(num_blocks, indices):
            dense = _ordered_to_dense(num_blocks, indices, indices.shape[-1])[..., :rows, :cols]
            return _dense_to_ordered(dense)
        full = (None, None) if self.full_kv_num_blocks is None else crop(self.full_kv_num_blocks,
                                                                          self.full_kv_indices)
        return BlockMask.from_kv_blocks(*crop(self.kv_num_blocks, self.kv_indices), *full,
                                        BLOCK_SIZE=self.BLOCK_SIZE, mask_mod=self.mask_mod,
                                        seq_lengths=(new_q_len, new_kv_len),
                                        compute_q_blocks=self.q_indices is not None)

    def to(self, device):
        """A BlockMask with its tensors on ``device``."""
        def move(t):
            return None if t is None else t.to(device)
        return BlockMask(self.seq_lengths, *(move(t) for t in (
            self.kv_num_blocks, self.kv_indices, self.full_kv_num_blocks, self.full_kv_indices, self.q_num_blocks,
            self.q_indices, self.full_q_num_blocks, self.full_q_indices)), BLOCK_SIZE=self.BLOCK_SIZE,
            mask_mod=self.mask_mod)

    def to_string(self, grid_size=(20, 20), limit=4):
        """A picture of the blocks of each (batch, head): full squares all computed, shaded some, blank none;
        at most ``grid_size`` cells (-1: one per block) and ``limit`` pictures."""
        dense = self.to_dense()
        *lead, rows, cols = dense.shape
        if grid_size == -1:
            grid_size = (rows, cols)
        elif isinstance(grid_size, int):
            grid_size = (grid_size, grid_size)
        row_step = max(1, -(-rows // grid_size[0]))
        col_step = max(1, -(-cols // grid_size[1]))
        pictures = []
        for n, where in enumerate(itertools.product(*(range(i) for i in lead))):
            if n == limit:
                pictures += ["...", "To print out more, set BlockMask.to_string(limit=N)",
                             "You can also index (BlockMask[batch, head]) to choose a specific batch or head"]
                break
            one = dense[where] if where else dense
            lines = [f"{where}"]
            for r in range(0, rows, row_step):
                cells = []
                for c in range(0, cols, col_step):
                    share = one[r:r + row_step, c:c + col_step].float().mean().item()
                    cells.append("██" if share == 1 else "  " if share == 0 else "░░")
                lines.append("".join(cells))
            pictures.append("\n".join(lines) + "\n")
        return "\n".join(pictures)

    def __str__(self):
        return f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n{self.to_string().strip()}\n)"

    def __repr__(self):
        def shape(t):
            return None if t is None else t.shape
        mod = getattr(self.mask_mod, '__name__', self.mask_mod)
        return (f"BlockMask(\n"
                f"    kv_num_blocks={self.kv_num_blocks.shape},\n"
                f"    kv_indices={self.kv_indices.shape},\n"
                f"    full_kv_num_blocks={shape(self.full_kv_num_blocks)},\n"
                f"    full_kv_indices={shape(self.full_kv_indices)},\n"
                f"    q_num_blocks={shape(self.q_num_blocks)},\n"
                f"    q_indices={shape(self.q_indices)},\n"
                f"    full_q_num_blocks={shape(self.full_q_num_blocks)},\n"
                f"    full_q_indices={shape(self.full_q_indices)},\n"
                f"    BLOCK_SIZE={self.BLOCK_SIZE},\n"
                f"    shape={self.shape},\n"
                f"    sparsity={self.sparsity():.2f}%,\n"
                f"    mask_mod={mod}\n"
                f")")


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None, BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                      _compile=False, separate_full_blocks=True):
    """The BlockMask of ``mask_mod`` over (B, H, Q_LEN, KV_LEN) (B or H None: one, broadcast over all), from its
    dense mask: a block with some allowed position is partial, one with all of them full (kept apart unless
    ``separate_full_blocks`` is False); blocks overhanging the sequences count their missing positions as
    masked. ``BLOCK_SIZE``: an int or (Q_BLOCK_SIZE, KV_BLOCK_SIZE)."""
    if _num_positional(mask_mod) != 4:
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    if _compile:
        warnings.warn("_compile flag on create_block_mask was originally added to work around a torch.compile "
                      "limitation. That limitation has since been addressed. So, to compile create_block_mask, we "
                      "suggest doing torch.compile(create_block_mask).", DeprecationWarning, stacklevel=2)
    Q_BLOCK, KV_BLOCK = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else BLOCK_SIZE
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    rows, cols = -(-Q_LEN // Q_BLOCK), -(-KV_LEN // KV_BLOCK)
    mask = ember.nn.functional.pad(mask, (0, cols * KV_BLOCK - KV_LEN, 0, rows * Q_BLOCK - Q_LEN))
    counts = mask.view(mask.shape[0], mask.shape[1], rows, Q_BLOCK, cols, KV_BLOCK).sum((3, 5))
    if separate_full_blocks:
        whole = Q_BLOCK * KV_BLOCK
        partial, full = _dense_to_ordered((counts > 0) & (counts < whole)), _dense_to_ordered(counts == whole)
    else:
        partial, full = _dense_to_ordered(counts > 0), (None, None)
    return BlockMask.from_kv_blocks(*partial, *full, BLOCK_SIZE=(Q_BLOCK, KV_BLOCK), mask_mod=mask_mod,
                                    seq_lengths=(Q_LEN, KV_LEN))


def _check_inputs(query, key, value, block_mask, enable_gqa):
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    if query.size(-1) != key.size(-1):
        raise ValueError(f"Expect query and key/value to have the same embedding dimension but got "
                         f"E={query.size(-1)} and E={key.size(-1)}.")
    if not enable_gqa and query.size(1) != key.size(1):
        raise ValueError(f"Expect query and key/value to have the same number of heads but got Hq={query.size(1)} "
                         f"and Hkv={key.size(1)}. Try setting enable_gqa=True for GQA.")
    if enable_gqa and query.size(1) % key.size(1):
        raise ValueError(f"Expect number of query heads to be a multiple of kv heads for GQA but got "
                         f"Hq={query.size(1)} and Hkv={key.size(1)}.")
    if query.size(0) != key.size(0):
        if block_mask is None:
            raise ValueError(f"Expect query and key/value to have the same batch size, or non-none block_mask, but "
                             f"got block_mask=None, Bq={query.size(0)}, and Bkv={key.size(0)}.")
        if block_mask.kv_num_blocks.size(0) != query.size(0):
            raise ValueError(f"Expect query and key/value to have the same batch size, or block_mask and query to "
                             f"have the same batch size, but got Bq={query.size(0)}, Bkv={key.size(0)}, "
                             f"B_block_mask={block_mask.kv_num_blocks.size(0)}.")
        if key.size(0) != 1:
            raise RuntimeError(f"Bq and Bkv must broadcast. Got Bq={query.size(0)} and Bkv={key.size(0)}")
    if block_mask is None:
        return
    if block_mask.mask_mod is _sliced_mask_mod_error:
        raise RuntimeError("Cannot use mask_mod from a sliced BlockMask")
    (L_mask, S_mask), L, S = block_mask.seq_lengths, query.size(-2), key.size(-2)
    if L > L_mask or S > S_mask:
        raise ValueError(f"block_mask was created for block_mask.shape={block_mask.shape} but got q_len={L} and "
                         f"kv_len={S}. As the block mask was created for a smaller length than you're using it for, "
                         f"you likely need to create a new block mask.")
    if (L, S) != (L_mask, S_mask):
        raise ValueError(f"block_mask was created for block_mask.shape={block_mask.shape} but got q_len={L} and "
                         f"kv_len={S}. As the block mask was created for a larger length than you're using it for, "
                         f"you can either 1. create a new block mask with the correct length, or 2. 'adjust' the "
                         f"existing block mask to the correct length by calling block_mask._adjust(q_len, kv_len).")


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None, enable_gqa=False,
                   return_lse=False, kernel_options=None, *, return_aux=None):
    """softmax(score_mod(q @ k^T * scale) masked by ``block_mask``) @ v for query (B, Hq, L, E), key (B, Hkv, S, E),
    value (B, Hkv, S, Ev); ``score_mod(score, b, h, q_idx, kv_idx)`` sees the query head as ``h``.

    Returns the output (B, Hq, L, Ev); with ``return_aux`` also an AuxOutput (lse, max_scores: (B, Hq, L), in
    the working precision), with the deprecated ``return_lse`` the logsumexp."""
    _check_inputs(query, key, value, block_mask, enable_gqa)
    if return_lse and return_aux is not None:
        raise ValueError("Cannot specify both return_lse and return_aux. return_lse is deprecated, please use "
                         "return_aux=AuxRequest(lse=True) instead.")
    if return_lse:
        _warn_once('return_lse', "return_lse is deprecated and will be removed in v2.10. Please use "
                   "return_aux=AuxRequest(lse=True) instead.", FutureWarning)
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))
    work = ember.float64 if query.dtype == ember.float64 else ember.float32
    groups = query.size(1) // key.size(1)
    if groups > 1:
        key, value = key.repeat_interleave(groups, 1), value.repeat_interleave(groups, 1)
    B, H, L = query.shape[:3]
    key, value = key.expand(B, *key.shape[1:]), value.expand(B, *value.shape[1:])
    sizes = (B, H, L, key.size(2))

    scores = (query.to(work) @ key.to(work).transpose(-2, -1)) * scale
    if score_mod is not None:
        scores = _apply_mod(score_mod, (scores,), sizes, query.device).expand(sizes)
    if block_mask is not None:
        scores = ember.where(block_mask._allowed(sizes, query.device), scores,
                             ember.tensor(-math.inf, dtype=work, device=query.device))

    # the safe softmax: a row with no allowed key gets probabilities 0 and logsumexp -inf, and no NaN gradient
    top = scores.amax(-1, keepdim=True)
    dead = top == -math.inf
    shift = ember.where(dead, 0.0, top).detach()
    e = (scores - shift).exp()
    total = ember.where(dead, 1.0, e.sum(-1, keepdim=True))
    out = (e / total).to(query.dtype) @ value.to(query.dtype)

    want_lse = return_lse or (return_aux is not None and return_aux.lse)
    lse = ember.where(dead, -math.inf, shift + total.log()).squeeze(-1) if want_lse else None
    if return_aux is not None:
        return out, AuxOutput(lse=lse, max_scores=top.squeeze(-1) if return_aux.max_scores else None)
    return (out, lse) if return_lse else out


# torch's advice, torch.compile(flex_attention) and torch.compile(create_block_mask), returns them unchanged:
# ember's capture would hold a BlockMask argument as an opaque constant guarded by identity (a new mask each
# step would recompile) and cannot return one. Called inside a compiled model, they are traced as usual.
flex_attention._torchdynamo_disable = create_block_mask._torchdynamo_disable = True
