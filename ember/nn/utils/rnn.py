"""Packed sequences: ``PackedSequence``, ``pack_padded_sequence``, ``pad_packed_sequence``, ``pad_sequence``,
``pack_sequence``, ``unpad_sequence``, ``unpack_sequence``.

A PackedSequence stores a batch of variable-length sequences time-major: ``data``
holds, for each time step t, the rows of the ``batch_sizes[t]`` sequences still
running (sorted longest first); ``sorted_indices`` maps that order to the
caller's. Packing and unpacking are slices and concatenations of ember ops, so
gradients flow through them.
"""
from collections import namedtuple

from ..._tensor import Tensor
from ... import int64, float16, float32, float64
from ... import _functions as _E

__all__ = ['PackedSequence', 'invert_permutation', 'pack_padded_sequence', 'pad_packed_sequence', 'pad_sequence',
           'unpad_sequence', 'pack_sequence', 'unpack_sequence']


def _index_tensor(values, device=None):
    from ..._creation import tensor
    return tensor(list(values), dtype=int64, device=device)


def _sort_descending(lens):
    import ember
    return ember.sort(_index_tensor(lens), descending=True).indices.tolist()


def invert_permutation(permutation):
    if permutation is None:
        return None
    perm = permutation.tolist()
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return _index_tensor(inv, permutation.device)


class PackedSequence(namedtuple('PackedSequence', ['data', 'batch_sizes', 'sorted_indices', 'unsorted_indices'])):
    """Holds ``data`` and ``batch_sizes`` of a packed batch (create it with ``pack_padded_sequence``)."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:     # torch allows PackedSequence((data, batch_sizes))
            data, batch_sizes = data[0], data[1]
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        dev = data.device
        si = self.sorted_indices.to(dev) if self.sorted_indices is not None else None
        ui = self.unsorted_indices.to(dev) if self.unsorted_indices is not None else None
        return type(self)(data, self.batch_sizes, si, ui)

    def cpu(self):
        return self.to('cpu')

    def cuda(self, *args, **kwargs):
        return self.to('cuda')

    def double(self):
        return self.to(dtype=float64)

    def float(self):
        return self.to(dtype=float32)

    def half(self):
        return self.to(dtype=float16)

    def long(self):
        return self.to(dtype=int64)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return False


def _lengths_list(lengths):
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D "
                               f"{lengths.device.type} {lengths.dtype} tensor")
        return [int(x) for x in lengths.tolist()]
    return [int(x) for x in lengths]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T, B, *) (or (B, T, *) with ``batch_first``) of sequences of ``lengths``.

    >>> import ember
    >>> p = pack_padded_sequence(ember.ones(3, 2, 1), [3, 1])
    >>> p.batch_sizes.tolist(), tuple(p.data.shape)
    ([2, 1, 1], (4, 1))
    """
    lens = _lengths_list(lengths)
    batch_dim = 0 if batch_first else 1
    if enforce_sorted:
        if any(a < b for a, b in zip(lens, lens[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                               "sidestep this requirement if you do not need ONNX exportability.")
        sorted_indices = None
    else:
        # torch's sort(descending=True), whose order of equal lengths is not the stable one (NOTE [tie order of
        # torch's sort]): it decides which sequences a train-mode LSTM's dropout masks fall on
        order = _sort_descending(lens)
        lens = [lens[i] for i in order]
        sorted_indices = _index_tensor(order, input.device)
        input = input.index_select(batch_dim, sorted_indices)
    if len(lens) != input.size(batch_dim):
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} (batch_size="
                           f"{input.size(batch_dim)})")
    if lens and lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if lens and lens[0] > input.size(1 - batch_dim):
        raise RuntimeError(f"Expected sequence length to be larger than or equal to the max length "
                           f"({lens[0]}) but got {input.size(1 - batch_dim)}")
    if batch_first:
        input = input.transpose(0, 1)
    batch_sizes = [sum(1 for n in lens if n > t) for t in range(lens[0] if lens else 0)]
    data = _E.cat([input.select(0, t).narrow(0, 0, bs) for t, bs in enumerate(batch_sizes)], 0)
    return PackedSequence(data, _index_tensor(batch_sizes), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of pack_padded_sequence: ``(padded, lengths)``, in the caller's batch order."""
    data, batch_sizes = sequence.data, [int(b) for b in sequence.batch_sizes.tolist()]
    max_len = len(batch_sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {max_len}")
    else:
        total_length = max_len
    B = batch_sizes[0] if batch_sizes else 0
    feat = tuple(data.shape[1:])
    steps, offset = [], 0
    for bs in batch_sizes:
        chunk = data.narrow(0, offset, bs)
        offset += bs
        if bs < B:
            chunk = _E.cat([chunk, _E.full((B - bs,) + feat, padding_value, dtype=data.dtype, device=data.device)])
        steps.append(chunk)
    for _ in range(total_length - max_len):
        steps.append(_E.full((B,) + feat, padding_value, dtype=data.dtype, device=data.device))
    padded = _E.stack(steps, 0)         # time-major, then a transposed view for batch_first, as torch's (its layout
    if batch_first:                     # decides where a dropout mask drawn over it falls)
        padded = padded.transpose(0, 1)
    lengths = [sum(1 for b in batch_sizes if b > i) for i in range(B)]
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = [lengths[i] for i in sequence.unsorted_indices.tolist()]
    return padded, _index_tensor(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side='right'):
    """Stack sequences of shape (L_i, *) into (max L, B, *) (or (B, max L, *)), padding with ``padding_value``."""
    if padding_side not in ('left', 'right'):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    max_len = max(s.size(0) for s in sequences)
    out = []
    for s in sequences:
        n = max_len - s.size(0)
        if n:
            pad = _E.full((n,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype, device=s.device)
            s = _E.cat([s, pad] if padding_side == 'right' else [pad, s])
        out.append(s)
    return _E.stack(out, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq.narrow(0, 0, n) for seq, n in zip(padded_sequences.unbind(0), _lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    lengths = [v.size(0) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
