"""``torchvision.utils``: tile a batch of images into one grid tensor, and save it as an image file."""
import math

import ember


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0):
    """Tile a ``(B, C, H, W)`` batch (or a list of ``(C, H, W)``) into one ``(3 or C, H', W')`` image.

    One-channel images are repeated to three channels, as torchvision.

    >>> make_grid(ember.zeros(4, 1, 5, 5), nrow=2).shape
    ember.Size([3, 16, 16])
    """
    if isinstance(tensor, (list, tuple)):
        tensor = ember.stack(list(tensor), dim=0)
    if not isinstance(tensor, ember.Tensor):
        raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")
    if tensor.dim() == 2:
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:
        if tensor.size(0) == 1:
            tensor = ember.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.size(1) == 1:
        tensor = ember.cat((tensor, tensor, tensor), 1)
    if normalize:
        tensor = tensor.clone()

        def norm_ip(img, low, high):
            img.clamp_(min=low, max=high)
            img.sub_(low).div_(max(high - low, 1e-5))

        def norm_range(t):
            if value_range is not None:
                norm_ip(t, value_range[0], value_range[1])
            else:
                norm_ip(t, float(t.min()), float(t.max()))

        if scale_each:
            for t in tensor:
                norm_range(t)
        else:
            norm_range(tensor)
    if tensor.size(0) == 1:
        return tensor.squeeze(0)
    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    grid = tensor.new_full((tensor.size(1), height * ymaps + padding, width * xmaps + padding), pad_value)
    k = 0
    for y in range(ymaps):
        for x in range(xmaps):
            if k >= nmaps:
                break
            grid.narrow(1, y * height + padding, height - padding).narrow(
                2, x * width + padding, width - padding).copy_(tensor[k])
            k += 1
    return grid


def save_image(tensor, fp, format=None, **kwargs):
    """Save a tensor (or batch, tiled with ``make_grid(**kwargs)``) in [0, 1] as an image file (Pillow).

    >>> save_image(ember.rand(4, 3, 8, 8), '/tmp/grid.png', nrow=2)   # doctest: +SKIP
    """
    from ._pil import pil_image
    Image = pil_image()
    grid = make_grid(tensor, **kwargs)
    ndarr = grid.detach().mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to('cpu', ember.uint8).numpy()
    Image.fromarray(ndarr).save(fp, format=format)
