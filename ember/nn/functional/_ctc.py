"""``ctc_loss``: the Connectionist Temporal Classification loss (Graves et al., 2006), torch's signature.

NOTE [CTC loss] -- For each sample, the target l (length L) is extended with blanks, l' = (b, l1, b, l2, ..., b) of
length S = 2L + 1, and the forward variables log_alpha (T, S) sum the probabilities of every alignment of a
prefix of l' with the first t frames:

    log_alpha[0, 0] = lp[0, b],   log_alpha[0, 1] = lp[0, l1]
    log_alpha[t, s] = lp[t, l'_s] + logsumexp(log_alpha[t-1, s], log_alpha[t-1, s-1], log_alpha[t-1, s-2])

the s-2 term only where l'_s is a label different from l'_{s-2} (a blank must separate repeats). The loss is
-logsumexp(log_alpha[T-1, S-1], log_alpha[T-1, S-2]). The backward variables log_beta run the same recursion
from the end (torch's, which include the frame's own emission), and the occupancy of position s at frame t is
gamma = exp(log_alpha + log_beta - lp[t, l'_s] + nll). torch's gradient with respect to the log-probabilities is
exp(lp) - (sum of gamma over the positions carrying each class): the gradient through a log_softmax applied
just before, which is how ctc_loss is meant to be called (log_softmax's backward removes the exp(lp) term
again, so the gradients of the logits are exact either way). ember returns torch's numbers.

The recursion runs over time in operators on (N, S) tensors, the batch and every position at once; samples of
different lengths read their own final frame and position. One autograd Function holds the pair (torch's
``_ctc_loss`` / ``_ctc_loss_backward``); its backward is not differentiable again, as torch's is not.
"""
import ember

__all__ = ['ctc_loss']

_NEG_INF = float('-inf')
_INF = float('inf')


def _lse(*xs):
    """Elementwise logsumexp of same-shaped tensors, -inf where all are -inf."""
    m = xs[0]
    for x in xs[1:]:
        m = ember.maximum(m, x)
    m = ember.where(ember.isinf(m), ember.zeros_like(m), m)
    s = ember.exp(xs[0] - m)
    for x in xs[1:]:
        s = s + ember.exp(x - m)
    return ember.log(s) + m


def _shift(x, k):
    """x moved k positions right along the last dim (k > 0) or left (k < 0), -inf filling the gap."""
    n = x.shape[-1]
    pad = ember.full(x.shape[:-1] + (min(abs(k), n),), _NEG_INF, dtype=x.dtype)
    if k > 0:
        return ember.cat([pad, x[..., :n - k]], -1) if n > k else pad
    return ember.cat([x[..., -k:], pad], -1) if n > -k else pad


class _CTC(ember.autograd.Function):
    """(log_probs (T, N, C), extended labels (N, S), input lengths (N,), target lengths (N,)) -> nll (N,)."""

    @staticmethod
    def forward(ctx, log_probs, ext, in_len, tg_len, blank, zero_infinity):
        T, N, C = log_probs.shape
        S = ext.shape[1]
        idx = ext.unsqueeze(0).expand(T, N, S)
        emit = log_probs.gather(2, idx)                       # (T, N, S): lp[t, n, l'_s]
        # the s-2 transition: a label that differs from the one two positions back
        skip = (ext != blank) & (ext != _shift_int(ext, 2, blank))
        pos = ember.arange(S).unsqueeze(0)
        la = ember.full((N, S), _NEG_INF, dtype=log_probs.dtype)
        la = ember.where(pos < 2, emit[0], la) if T else la
        alphas = [la]
        for t in range(1, T):
            s2 = ember.where(skip, _shift(la, 2), ember.full_like(la, _NEG_INF))
            la = emit[t] + _lse(la, _shift(la, 1), s2)
            alphas.append(la)
        last_t = (in_len - 1).clamp(min=0)
        S_n = 2 * tg_len + 1
        if T:
            final = ember.stack(alphas).gather(0, last_t.view(1, N, 1).expand(1, N, S))[0]   # (N, S)
            end = final.gather(1, (S_n - 1).view(N, 1))[:, 0]
            before = final.gather(1, (S_n - 2).clamp(min=0).view(N, 1))[:, 0]
            before = ember.where(tg_len > 0, before, ember.full_like(before, _NEG_INF))
            nll = -_lse(end, before)
        else:
            nll = ember.zeros(N, dtype=log_probs.dtype)
        # no frames: only the empty target has probability 1
        nll = ember.where(in_len == 0, ember.where(tg_len == 0, ember.zeros_like(nll), ember.full_like(nll, _INF)),
                          nll)
        ctx.save_for_backward(log_probs, ext, in_len, tg_len, nll)
        ctx.alphas, ctx.emit, ctx.skip, ctx.blank, ctx.zero_infinity = alphas, emit, skip, blank, zero_infinity
        if zero_infinity:
            nll = ember.where(ember.isinf(nll), ember.zeros_like(nll), nll)
        return nll

    @staticmethod
    def backward(ctx, grad):
        log_probs, ext, in_len, tg_len, nll = ctx.saved_tensors
        T, N, C = log_probs.shape
        S = ext.shape[1]
        emit, skip = ctx.emit, ctx.skip
        pos = ember.arange(S).unsqueeze(0)
        S_n = (2 * tg_len + 1).unsqueeze(1)
        inside = pos < S_n
        # position s+2 may be reached from s where the s+2 transition is allowed there
        skip_from = _shift_bool(skip, -2)
        start = inside & (pos >= S_n - 2) & ((pos == S_n - 1) | (tg_len.unsqueeze(1) > 0))
        last_t = (in_len - 1).unsqueeze(1)
        lb = ember.full((N, S), _NEG_INF, dtype=log_probs.dtype)
        gamma = ember.zeros((T, N, S), dtype=log_probs.dtype)
        nll_col = nll.unsqueeze(1)
        for t in range(T - 1, -1, -1):
            s2 = ember.where(skip_from, _shift(lb, -2), ember.full_like(lb, _NEG_INF))
            rec = emit[t] + _lse(lb, _shift(lb, -1), s2)
            lb = ember.where(last_t == t, ember.where(start, emit[t], ember.full_like(lb, _NEG_INF)),
                             ember.where((last_t > t) & inside, rec, ember.full_like(lb, _NEG_INF)))
            gamma[t] = ember.exp(ctx.alphas[t] + lb - emit[t] + nll_col)
        # sum the occupancies of the positions carrying each class: torch's lcab term
        occ = ember.zeros((T, N, C), dtype=log_probs.dtype).scatter_add_(2, ext.unsqueeze(0).expand(T, N, S), gamma)
        g = ember.exp(log_probs) - occ
        frames = (ember.arange(T).view(T, 1) < in_len.view(1, N)).unsqueeze(2)
        g = ember.where(frames, g, ember.zeros_like(g))
        # an infinite loss (no alignment fits): torch's formula gives NaN in every frame, or 0 with zero_infinity
        g = ember.where(ember.isinf(nll).view(1, N, 1) & frames, ember.full_like(g, 0.0 if ctx.zero_infinity else
                                                                                  float('nan')), g)
        return g * grad.view(1, N, 1), None, None, None, None, None


def _shift_int(x, k, fill):
    """An integer tensor moved k positions right along the last dim, ``fill`` in the gap."""
    n = x.shape[-1]
    pad = ember.full(x.shape[:-1] + (min(k, n),), fill, dtype=x.dtype)
    return ember.cat([pad, x[..., :n - k]], -1) if n > k else pad


def _shift_bool(x, k):
    """A bool tensor moved |k| positions left (k < 0), False in the gap."""
    n = x.shape[-1]
    pad = ember.zeros(x.shape[:-1] + (min(-k, n),), dtype=ember.bool)
    return ember.cat([x[..., -k:], pad], -1) if n > -k else pad


def _lengths(v, name, n):
    if isinstance(v, ember.Tensor):
        v = v.reshape(-1).tolist()
    elif isinstance(v, int):
        v = [v]
    v = [int(x) for x in v]
    if len(v) != n:
        raise RuntimeError(f"{name} must be of size batch_size")
    return v


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction='mean', zero_infinity=False):
    """The CTC loss of ``log_probs`` (T, N, C) (or unbatched (T, C)), normally log_softmax outputs, against
    ``targets``: padded (N, S) or the N targets concatenated (sum(target_lengths),); lengths as tensors or
    sequences of ints. ``reduction='mean'`` divides each sample's loss by its target length before averaging.
    ``zero_infinity`` zeroes the infinite losses (inputs too short for their targets) and their gradients.
    NOTE [CTC loss] has the recursion.

    >>> import ember, ember.nn.functional as F
    >>> lp = ember.zeros(3, 1, 2).log_softmax(2)        # two classes, even odds in each of 3 frames
    >>> round(F.ctc_loss(lp, ember.tensor([[1]]), [3], [1], reduction='sum').item(), 4)    # 6 paths of 8
    0.2877
    """
    if reduction not in ('none', 'mean', 'sum'):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs, targets = log_probs.unsqueeze(1), targets.unsqueeze(0)
    T, N, C = log_probs.shape
    in_len = _lengths(input_lengths, 'input_lengths', N)
    tg_len = _lengths(target_lengths, 'target_lengths', N)
    if not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    for v in in_len:
        if v > T:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got value {v} (while checking "
                               f"arguments for ctc_loss_allocate_outputs)")
    targets = targets.long()
    L = max(tg_len, default=0)
    if targets.dim() == 1 and not unbatched:        # concatenated targets: cut them into padded rows
        offsets = [sum(tg_len[:i]) for i in range(N)]
        rows = [targets[o:o + n] for o, n in zip(offsets, tg_len)]
        targets = ember.stack([ember.cat([r, ember.full((L - r.numel(),), blank, dtype=ember.int64)]) for r in rows]) \
            if N else ember.zeros((0, L), dtype=ember.int64)
    elif targets.shape[1] < L:
        raise RuntimeError(f"Expected tensor to have size at least {L} at dimension 1, but got size "
                           f"{targets.shape[1]} for argument #2 'targets' (while checking arguments for "
                           f"ctc_loss_allocate_outputs)")
    targets = targets[:, :L]
    S = 2 * L + 1
    ext = ember.full((N, S), blank, dtype=ember.int64)
    if L:
        ext[:, 1::2] = targets
        pos = ember.arange(S).unsqueeze(0)
        ext = ember.where(pos < (2 * ember.tensor(tg_len) + 1).unsqueeze(1), ext, ember.full_like(ext, blank))
    in_t, tg_t = ember.tensor(in_len, dtype=ember.int64), ember.tensor(tg_len, dtype=ember.int64)
    nll = _CTC.apply(log_probs, ext, in_t, tg_t, blank, zero_infinity)
    if unbatched:
        nll = nll.squeeze(0)
    if reduction == 'mean':
        return (nll / tg_t.clamp(min=1).to(nll.dtype).reshape(nll.shape)).mean()
    if reduction == 'sum':
        return nll.sum()
    return nll
