"""AdaptiveLogSoftmaxWithLoss (Grave et al., "Efficient softmax approximation for GPUs"): the most frequent classes
(the shortlist, below ``cutoffs[0]``) and one entry per tail cluster share a head softmax; a target in cluster ``i``
adds the cluster's own log-softmax, computed by a low-rank projection (``in_features / div_value**(i+1)`` wide)
only for the rows whose targets fall there."""
from collections import namedtuple

import ember
from .module import Module
from .container import Sequential, ModuleList
from .linear import Linear
from .. import functional as F

__all__ = ['AdaptiveLogSoftmaxWithLoss']

_ASMoutput = namedtuple('_ASMoutput', ['output', 'loss'])


class AdaptiveLogSoftmaxWithLoss(Module):
    """``forward(input, target)`` gives ``(output, loss)``: each row's target log-probability and their negated
    mean; ``log_prob(input)`` every class's log-probability; ``predict(input)`` the most likely class.

    >>> import ember
    >>> m = AdaptiveLogSoftmaxWithLoss(16, 10, cutoffs=[4, 8])
    >>> out = m(ember.randn(3, 16), ember.tensor([0, 5, 9]))
    >>> tuple(out.output.shape), tuple(m.log_prob(ember.randn(3, 16)).shape)
    ((3,), (3, 10))
    """

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        kw = {'device': device, 'dtype': dtype}
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1 or \
                len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features, self.n_classes, self.div_value, self.head_bias = in_features, n_classes, div_value, head_bias
        self.cutoffs = cutoffs + [n_classes]
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, **kw),
                                        Linear(hsz, osz, bias=False, **kw)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        batched = _check_forward(input_, target_)
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        batch_size = target.size(0)
        output = input.new_zeros(batch_size)
        gather_inds = target.new_empty(batch_size)
        used_rows = 0
        bounds = [0] + self.cutoffs
        for i in range(len(bounds) - 1):
            low, high = bounds[i], bounds[i + 1]
            mask = (target >= low) & (target < high)
            rows = mask.nonzero().squeeze()
            if rows.numel() == 0:
                continue
            if i == 0:
                gather_inds.index_copy_(0, rows, target[mask])
            else:
                cluster_logprob = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
                gather_inds.index_fill_(0, rows, self.shortlist_size + i - 1)
                local = cluster_logprob.gather(1, (target[mask] - low).unsqueeze(1))
                output.index_copy_(0, rows, local.squeeze(1))
            used_rows += rows.numel()
        if used_rows != batch_size:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{target.min().item()}, {target.max().item()}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output += head_logprob.gather(1, gather_inds.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _get_full_log_prob(self, input, head_output):
        out = input.new_empty((head_output.size(0), self.n_classes))
        head_logprob = F.log_softmax(head_output, dim=1)
        out[:, :self.shortlist_size] = head_logprob[:, :self.shortlist_size]
        for i, (start, stop) in enumerate(zip(self.cutoffs, self.cutoffs[1:])):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            out[:, start:stop] = cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1)
        return out

    def log_prob(self, input):
        """Every class's log-probability, (N, n_classes) for (N, in_features), (n_classes,) for (in_features,)."""
        head_output = self.head(input)
        if input.dim() == 2:
            return self._get_full_log_prob(input, head_output)
        return self._get_full_log_prob(input.unsqueeze(0), head_output.unsqueeze(0)).squeeze(0)

    def predict(self, input):
        """The most likely class per row: from the head alone when it picks a shortlist class."""
        head_output = self.head(input)
        output = ember.argmax(head_output, dim=1)
        outside = output >= self.shortlist_size
        if not outside.any():
            return output
        if outside.all():
            return ember.argmax(self._get_full_log_prob(input, head_output), dim=1)
        output[outside] = ember.argmax(self._get_full_log_prob(input[outside], head_output[outside]), dim=1)
        return output


def _check_forward(input_, target_):
    """torch's shape rules: (N, in) with (N,) targets, or (in,) with a 0-d target; True when batched."""
    targ_dim = target_.dim()
    if targ_dim == 1:
        if input_.size(0) != target_.size(0):
            raise RuntimeError("Input and target should have the same size in the batch dimension.")
        if input_.dim() != 2:
            raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                               f"{input_.size()}")
    elif targ_dim == 0:
        if input_.dim() != 1:
            raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                               f"{input_.size()}")
    else:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    return targ_dim > 0
