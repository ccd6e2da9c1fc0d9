"""``torchvision.ops.misc``: the building blocks torchvision's models (and timm, which imports
``FrozenBatchNorm2d`` from here) share, with torchvision's constructor arguments and submodule indices.

- ``FrozenBatchNorm2d``: batch norm with fixed statistics and affine parameters, all buffers.
- ``Conv2dNormActivation`` / ``Conv1dNormActivation`` / ``Conv3dNormActivation``: convolution (bias only
  without a norm layer), norm, activation as a Sequential (indices 0, 1, 2); padding keeps the size.
- ``SqueezeExcitation``: channel attention, ``avgpool``, ``fc1``, ``fc2`` (1x1 convolutions).
- ``MLP``: Linear / norm / activation / Dropout blocks, the last Linear followed by Dropout.
- ``Permute``; ``stochastic_depth`` and ``StochasticDepth`` (a residual branch dropped per row or per batch).
"""
import ember
import ember.nn as nn

__all__ = ['FrozenBatchNorm2d', 'Conv1dNormActivation', 'Conv2dNormActivation', 'Conv3dNormActivation',
           'SqueezeExcitation', 'MLP', 'Permute', 'stochastic_depth', 'StochasticDepth']


class FrozenBatchNorm2d(nn.Module):
    """BatchNorm2d whose statistics and affine parameters are fixed buffers."""

    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.register_buffer('weight', ember.ones(num_features))
        self.register_buffer('bias', ember.zeros(num_features))
        self.register_buffer('running_mean', ember.zeros(num_features))
        self.register_buffer('running_var', ember.ones(num_features))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        state_dict.pop(prefix + 'num_batches_tracked', None)     # a BatchNorm2d's checkpoint loads as well
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, x):
        scale = self.weight * (self.running_var + self.eps).rsqrt()
        shift = self.bias - self.running_mean * scale
        return x * scale.reshape(1, -1, 1, 1) + shift.reshape(1, -1, 1, 1)

    def __repr__(self):
        return f'{type(self).__name__}({self.weight.shape[0]}, eps={self.eps})'


class ConvNormActivation(nn.Sequential):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None, groups=1,
                 norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU, dilation=1, inplace=True, bias=None,
                 conv_layer=nn.Conv2d):
        if padding is None:
            if isinstance(kernel_size, int) and isinstance(dilation, int):
                padding = (kernel_size - 1) // 2 * dilation
            else:
                n = len(kernel_size) if isinstance(kernel_size, (list, tuple)) else len(dilation)
                ks = kernel_size if isinstance(kernel_size, (list, tuple)) else (kernel_size,) * n
                dl = dilation if isinstance(dilation, (list, tuple)) else (dilation,) * n
                padding = tuple((k - 1) // 2 * d for k, d in zip(ks, dl))
        if bias is None:
            bias = norm_layer is None
        layers = [conv_layer(in_channels, out_channels, kernel_size, stride, padding, dilation=dilation,
                             groups=groups, bias=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer() if inplace is None else activation_layer(inplace=inplace))
        super().__init__(*layers)
        self.out_channels = out_channels


class Conv1dNormActivation(ConvNormActivation):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None, groups=1,
                 norm_layer=nn.BatchNorm1d, activation_layer=nn.ReLU, dilation=1, inplace=True, bias=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, groups, norm_layer,
                         activation_layer, dilation, inplace, bias, nn.Conv1d)


class Conv2dNormActivation(ConvNormActivation):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None, groups=1,
                 norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU, dilation=1, inplace=True, bias=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, groups, norm_layer,
                         activation_layer, dilation, inplace, bias, nn.Conv2d)


class Conv3dNormActivation(ConvNormActivation):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None, groups=1,
                 norm_layer=nn.BatchNorm3d, activation_layer=nn.ReLU, dilation=1, inplace=True, bias=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, groups, norm_layer,
                         activation_layer, dilation, inplace, bias, nn.Conv3d)


class SqueezeExcitation(nn.Module):
    """x * scale_activation(fc2(activation(fc1(avgpool(x)))))."""

    def __init__(self, input_channels, squeeze_channels, activation=nn.ReLU, scale_activation=nn.Sigmoid):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def _scale(self, x):
        return self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))

    def forward(self, x):
        return self._scale(x) * x


class MLP(nn.Sequential):
    def __init__(self, in_channels, hidden_channels, norm_layer=None, activation_layer=nn.ReLU, inplace=None,
                 bias=True, dropout=0.0):
        kw = {} if inplace is None else {'inplace': inplace}
        layers, dim = [], in_channels
        for hidden in hidden_channels[:-1]:
            layers.append(nn.Linear(dim, hidden, bias=bias))
            if norm_layer is not None:
                layers.append(norm_layer(hidden))
            layers += [activation_layer(**kw), nn.Dropout(dropout, **kw)]
            dim = hidden
        layers += [nn.Linear(dim, hidden_channels[-1], bias=bias), nn.Dropout(dropout, **kw)]
        super().__init__(*layers)


class Permute(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.dims = list(dims)

    def forward(self, x):
        return x.permute(*self.dims)


def stochastic_depth(input, p, mode, training=True):
    """Zero whole rows (``mode='row'``: per sample) or the whole batch (``'batch'``) with probability p,
    scaling the kept ones by 1/(1 - p); the identity outside training or with p = 0."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}")
    if mode not in ('batch', 'row'):
        raise ValueError(f"mode has to be either 'batch' or 'row', but got {mode}")
    if not training or p == 0.0:
        return input
    keep = 1.0 - p
    size = [input.shape[0]] + [1] * (input.ndim - 1) if mode == 'row' else [1] * input.ndim
    noise = ember.empty(size, dtype=input.dtype, device=input.device).bernoulli_(keep)
    if keep > 0.0:
        noise.div_(keep)
    return input * noise


class StochasticDepth(nn.Module):
    def __init__(self, p, mode):
        super().__init__()
        self.p, self.mode = p, mode

    def forward(self, input):
        return stochastic_depth(input, self.p, self.mode, self.training)

    def __repr__(self):
        return f'{type(self).__name__}(p={self.p}, mode={self.mode})'
