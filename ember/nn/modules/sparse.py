"""``Embedding``: a lookup table of ``num_embeddings`` vectors (torch's padding_idx/max_norm semantics), and
``EmbeddingBag``: sums, means or maxima of bags of them."""
from ... import _functions as _E
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ['Embedding', 'EmbeddingBag']


def _padding_index(padding_idx, num_embeddings, label):
    """``padding_idx`` checked against the table's size and made non-negative (torch's asserts; Embedding's message
    says ``Padding_idx``, EmbeddingBag's ``padding_idx``)."""
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < num_embeddings, f'{label} must be within num_embeddings'
        elif padding_idx < 0:
            assert padding_idx >= -num_embeddings, f'{label} must be within num_embeddings'
            padding_idx = num_embeddings + padding_idx
    return padding_idx


def _norm_options(m):
    """The max_norm, norm_type and scale_grad_by_freq part of an embedding table's repr, where not default."""
    s = ''
    if m.max_norm is not None:
        s += ', max_norm={max_norm}'
    if m.norm_type != 2:
        s += ', norm_type={norm_type}'
    if m.scale_grad_by_freq is not False:
        s += ', scale_grad_by_freq={scale_grad_by_freq}'
    return s


class Embedding(Module):
    """``weight``: (num_embeddings, embedding_dim) ~ N(0, 1), with the ``padding_idx`` row zeroed.

    >>> import ember
    >>> e = ember.nn.Embedding(10, 3, padding_idx=0)
    >>> e(ember.tensor([[0, 2]])).shape
    ember.Size([1, 2, 3])
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _padding_index(padding_idx, num_embeddings, 'Padding_idx')
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if _weight is None:
            self.weight = Parameter(_E.empty((num_embeddings, embedding_dim), device=device, dtype=dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            assert list(_weight.shape) == [num_embeddings, embedding_dim], \
                'Shape of weight does not match num_embeddings and embedding_dim'
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        self.sparse = sparse

    def reset_parameters(self):
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            init.zeros_(self.weight.select(0, self.padding_idx))

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = '{num_embeddings}, {embedding_dim}'
        if self.padding_idx is not None:
            s += ', padding_idx={padding_idx}'
        s += _norm_options(self)
        if self.sparse is not False:
            s += ', sparse=True'
        return s.format(**self.__dict__)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        assert embeddings.dim() == 2, 'Embeddings parameter is expected to be 2-dimensional'
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, _freeze=freeze,
                   padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(Module):
    """``weight`` as Embedding's; ``forward(input, offsets=None, per_sample_weights=None)`` reduces each bag of
    looked-up rows by ``mode`` ('sum', 'mean' or 'max'; see ``F.embedding_bag``).

    >>> import ember
    >>> bag = ember.nn.EmbeddingBag(10, 3, mode='sum')
    >>> bag(ember.tensor([1, 2, 4, 5, 4]), ember.tensor([0, 2])).shape
    ember.Size([2, 3])
    """

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode='mean', sparse=False, _weight=None, include_last_offset=False, padding_idx=None,
                 device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.padding_idx = _padding_index(padding_idx, num_embeddings, 'padding_idx')
        if _weight is None:
            self.weight = Parameter(_E.empty((num_embeddings, embedding_dim), device=device, dtype=dtype))
            self.reset_parameters()
        else:
            assert list(_weight.shape) == [num_embeddings, embedding_dim], \
                'Shape of weight does not match num_embeddings and embedding_dim'
            self.weight = Parameter(_weight)
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            init.zeros_(self.weight.select(0, self.padding_idx))

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    def extra_repr(self):
        s = '{num_embeddings}, {embedding_dim}' + _norm_options(self) + ', mode={mode}'
        if self.padding_idx is not None:
            s += ', padding_idx={padding_idx}'
        return s.format(**{k: repr(v) if k == 'mode' else v for k, v in self.__dict__.items()})

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode='mean', sparse=False, include_last_offset=False, padding_idx=None):
        assert embeddings.dim() == 2, 'Embeddings parameter is expected to be 2-dimensional'
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, max_norm=max_norm,
                  norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
