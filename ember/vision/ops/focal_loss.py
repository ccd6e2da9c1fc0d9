"""``torchvision.ops.sigmoid_focal_loss``: RetinaNet's loss (Lin et al. 2017), written in ember ops so that
autograd differentiates it."""
import ember
import ember.nn.functional as F

__all__ = ['sigmoid_focal_loss']


def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2, reduction='none'):
    """Binary cross-entropy on logits, scaled by ``(1 - p_t) ** gamma`` (easy examples count less) and by
    ``alpha`` for positives, ``1 - alpha`` for negatives (``alpha=-1``: no weighting).

    >>> round(sigmoid_focal_loss(ember.tensor([0.]), ember.tensor([1.])).item(), 6)
    0.043322
    """
    if not (0 <= alpha <= 1) and alpha != -1:
        raise ValueError(f"Invalid alpha value: {alpha}. alpha must be in the range [0,1] or -1 for ignore.")
    p = ember.sigmoid(inputs)
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction='none') * (1 - p_t) ** gamma
    if alpha >= 0:
        loss = (alpha * targets + (1 - alpha) * (1 - targets)) * loss
    if reduction == 'none':
        return loss
    if reduction == 'mean':
        return loss.mean()
    if reduction == 'sum':
        return loss.sum()
    raise ValueError(f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction modes: 'none', 'mean', "
                     "'sum'")
