"""Quantized embeddings: quint8 weights quantized per row with float scales and offsets
(per_channel_affine_float_qparams, the weight-only ``float_qparams_weight_only_qconfig``), float outputs. The
state dict has torch's keys (``_packed_params.dtype``, ``_packed_params._packed_weight``).

A row is dequantized as fbgemm's embedding kernels do: ``fma(q, scale, bias)`` with ``bias = -zero_point * scale``
in float32 (float64 holds the product of an 8-bit integer and a float32 exactly, so one rounding is left)."""
import ember
from ember import nn
from ember.nn import functional as F
from ._utils import _quantize_weight

__all__ = ['Embedding', 'EmbeddingBag', 'EmbeddingPackedParams']


class EmbeddingPackedParams(nn.Module):
    """The quantized weight of a quantized embedding (torch packs it for fbgemm; ember keeps it as it is)."""
    _version = 1

    def __init__(self, num_embeddings, embedding_dim, dtype=ember.quint8):
        super().__init__()
        self.dtype = dtype
        if dtype != ember.quint8:
            raise NotImplementedError("ember's quantized embeddings take quint8 weights (quint4x2 is not provided)")
        self.set_weight(ember.quantize_per_channel(ember.zeros(num_embeddings, embedding_dim),
                                                   ember.ones(num_embeddings), ember.zeros(num_embeddings), 0,
                                                   ember.quint8))

    def set_weight(self, weight):
        if weight.qscheme() != ember.per_channel_affine_float_qparams:
            raise NotImplementedError("Unsupported qscheme for embedding weights: expected "
                                      "per_channel_affine_float_qparams")
        self._packed_weight = weight

    def _weight(self):
        return self._packed_weight

    def _table(self):
        """The float32 rows as fbgemm computes them (module docstring)."""
        w = self._packed_weight
        s = w.q_per_channel_scales().float()
        bias = -(w.q_per_channel_zero_points().float() * s)
        return (w.int_repr().double() * s.double()[:, None] + bias.double()[:, None]).float()

    def forward(self, x):
        return x

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + 'dtype'] = self.dtype
        destination[prefix + '_packed_weight'] = self._weight()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        self.dtype = state_dict.pop(prefix + 'dtype', self.dtype)
        self.set_weight(state_dict.pop(prefix + '_packed_weight'))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    def __repr__(self):
        return self._weight().__repr__()


class Embedding(nn.Module):
    """An embedding over a quint8 weight quantized per row (float scales and offsets); float32 output.

    >>> m = Embedding(10, 3)
    >>> m(ember.tensor([1, 2])).shape
    ember.Size([2, 3])
    """
    _version = 1

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, dtype=ember.quint8):
        super().__init__()
        self.num_embeddings, self.embedding_dim, self.dtype = num_embeddings, embedding_dim, dtype
        self._packed_params = EmbeddingPackedParams(num_embeddings, embedding_dim, dtype)
        if _weight is not None:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError(f"Shape of weight does not match num_embeddings and embedding_dim: expected "
                                     f"{[num_embeddings, embedding_dim]}, got {list(_weight.shape)}")
            self._packed_params.set_weight(_weight)

    def forward(self, indices):
        return F.embedding(indices, self._packed_params._table())

    def _get_name(self):
        return 'QuantizedEmbedding'

    def __repr__(self):
        return f'{self._get_name()}({self.extra_repr()})'

    def extra_repr(self):
        return (f'num_embeddings={self.num_embeddings}, embedding_dim={self.embedding_dim}, '
                f'dtype={self._packed_params.dtype}, qscheme={self.weight().qscheme()}')

    def set_weight(self, w):
        self._packed_params.set_weight(w)

    def weight(self):
        return self._packed_params._weight()

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The quantized embedding of float ``mod`` (its qconfig's weight observer must be float-qparams)."""
        float_cls = nn.EmbeddingBag if cls is EmbeddingBag else nn.Embedding
        if type(mod) is not float_cls:
            raise AssertionError(f"nnq.{cls.__name__}.from_float only works for {float_cls.__name__}")
        if not hasattr(mod, 'qconfig'):
            raise AssertionError(f"{float_cls.__name__} input float module must have qconfig defined")
        from ember.ao.quantization.qconfig import float_qparams_weight_only_qconfig
        qc = mod.qconfig if mod.qconfig is not None and mod.qconfig.weight is not None else \
            float_qparams_weight_only_qconfig
        observer = qc.weight()
        if observer.qscheme != ember.per_channel_affine_float_qparams:
            raise AssertionError(f"{float_cls.__name__} quantization is only supported with "
                                 "float_qparams_weight_only_qconfig.")
        if observer.dtype not in (ember.quint8, ember.quint4x2):
            raise AssertionError(f"The only supported dtype for nnq.{cls.__name__} is torch.quint8 and "
                                 f"torch.quint4x2, got {observer.dtype}")
        observer(mod.weight)
        q = cls._from_float_module(mod, observer.dtype)
        q.set_weight(_quantize_weight(mod.weight.float(), observer))
        return q

    @classmethod
    def _from_float_module(cls, mod, dtype):
        return cls(mod.num_embeddings, mod.embedding_dim, dtype=dtype)


class EmbeddingBag(Embedding):
    """A bag of quantized embeddings, summed per bag. As torch's (its ``embedding_bag_byte`` is called with mode
    0), the sum is taken whatever ``mode`` says.

    >>> m = EmbeddingBag(10, 3)
    >>> m(ember.tensor([1, 2, 3]), ember.tensor([0, 1])).shape
    ember.Size([2, 3])
    """

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode='sum', sparse=False, _weight=None, include_last_offset=False, dtype=ember.quint8):
        super().__init__(num_embeddings, embedding_dim, _weight=_weight, dtype=dtype)
        self.mode, self.pruned_weights, self.include_last_offset = mode, False, include_last_offset

    def forward(self, indices, offsets=None, per_sample_weights=None, compressed_indices_mapping=None):
        return F.embedding_bag(indices, self._packed_params._table(), offsets, mode='sum',
                               per_sample_weights=per_sample_weights, include_last_offset=self.include_last_offset)

    def _get_name(self):
        return 'QuantizedEmbeddingBag'

    @classmethod
    def _from_float_module(cls, mod, dtype):
        return cls(mod.num_embeddings, mod.embedding_dim, dtype=dtype, include_last_offset=mod.include_last_offset)
