"""Vision Transformer (Dosovitskiy et al. 2020) with torchvision's names: ``conv_proj``, ``class_token``,
``encoder.pos_embedding``, ``encoder.layers.encoder_layer_{i}.{ln_1,self_attention,ln_2,mlp.0,mlp.3}``,
``encoder.ln``, ``heads.head``. ``image_size`` may be any multiple of the patch size (tests use 32).
"""
import math
from collections import OrderedDict
from functools import partial

import ember
import ember.nn as nn

from ._api import _check_num_classes, _load, _resolve, _weights, register_model

ViT_B_16_Weights = _weights('ViT_B_16_Weights', {'IMAGENET1K_V1': 'vit_b_16-c867db91.pth'})


class MLPBlock(nn.Sequential):
    """Linear → GELU → Dropout → Linear → Dropout (indices 0..4, as torchvision.ops.MLP)."""

    def __init__(self, in_dim, mlp_dim, dropout):
        super().__init__(nn.Linear(in_dim, mlp_dim), nn.GELU(), nn.Dropout(dropout), nn.Linear(mlp_dim, in_dim),
                         nn.Dropout(dropout))
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.normal_(m.bias, std=1e-6)


class EncoderBlock(nn.Module):
    def __init__(self, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout, norm_layer):
        super().__init__()
        self.num_heads = num_heads
        self.ln_1 = norm_layer(hidden_dim)
        self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads, dropout=attention_dropout, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = norm_layer(hidden_dim)
        self.mlp = MLPBlock(hidden_dim, mlp_dim, dropout)

    def forward(self, input):
        if input.dim() != 3:
            raise ValueError(f"Expected (batch_size, seq_length, hidden_dim) got {tuple(input.shape)}")
        x = self.ln_1(input)
        x, _ = self.self_attention(x, x, x, need_weights=False)
        x = self.dropout(x) + input
        return x + self.mlp(self.ln_2(x))


class Encoder(nn.Module):
    def __init__(self, seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout, norm_layer):
        super().__init__()
        self.pos_embedding = nn.Parameter(ember.empty(1, seq_length, hidden_dim).normal_(std=0.02))
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.Sequential(OrderedDict(
            (f'encoder_layer_{i}', EncoderBlock(num_heads, hidden_dim, mlp_dim, dropout, attention_dropout, norm_layer))
            for i in range(num_layers)))
        self.ln = norm_layer(hidden_dim)

    def forward(self, input):
        return self.ln(self.layers(self.dropout(input + self.pos_embedding)))


class VisionTransformer(nn.Module):
    def __init__(self, image_size, patch_size, num_layers, num_heads, hidden_dim, mlp_dim, dropout=0.0,
                 attention_dropout=0.0, num_classes=1000, representation_size=None, norm_layer=None):
        super().__init__()
        if image_size % patch_size != 0:
            raise ValueError("Input shape indivisible by patch size!")
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-6)
        self.image_size, self.patch_size, self.hidden_dim = image_size, patch_size, hidden_dim
        self.mlp_dim, self.attention_dropout, self.dropout = mlp_dim, attention_dropout, dropout
        self.num_classes, self.representation_size = num_classes, representation_size
        self.conv_proj = nn.Conv2d(3, hidden_dim, kernel_size=patch_size, stride=patch_size)
        seq_length = (image_size // patch_size) ** 2 + 1      # + the class token
        self.class_token = nn.Parameter(ember.zeros(1, 1, hidden_dim))
        self.encoder = Encoder(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                               norm_layer)
        self.seq_length = seq_length
        heads = OrderedDict()
        if representation_size is None:
            heads['head'] = nn.Linear(hidden_dim, num_classes)
        else:
            heads['pre_logits'] = nn.Linear(hidden_dim, representation_size)
            heads['act'] = nn.Tanh()
            heads['head'] = nn.Linear(representation_size, num_classes)
        self.heads = nn.Sequential(heads)
        fan_in = self.conv_proj.in_channels * self.conv_proj.kernel_size[0] * self.conv_proj.kernel_size[1]
        nn.init.trunc_normal_(self.conv_proj.weight, std=math.sqrt(1 / fan_in))
        nn.init.zeros_(self.conv_proj.bias)
        if hasattr(self.heads, 'pre_logits'):
            fan_in = self.heads.pre_logits.in_features
            nn.init.trunc_normal_(self.heads.pre_logits.weight, std=math.sqrt(1 / fan_in))
            nn.init.zeros_(self.heads.pre_logits.bias)
        nn.init.zeros_(self.heads.head.weight)
        nn.init.zeros_(self.heads.head.bias)

    def _process_input(self, x):
        n, c, h, w = x.shape
        p = self.patch_size
        if h != self.image_size or w != self.image_size:
            raise AssertionError(f"Wrong image height/width! Expected {self.image_size} but got {h}x{w}!")
        x = self.conv_proj(x)
        return x.reshape(n, self.hidden_dim, (h // p) * (w // p)).permute(0, 2, 1)

    def forward(self, x):
        x = self._process_input(x)
        n = x.shape[0]
        x = ember.cat([self.class_token.expand(n, -1, -1), x], dim=1)
        x = self.encoder(x)
        return self.heads(x[:, 0])


@register_model(ViT_B_16_Weights)
def vit_b_16(*, weights=None, progress=True, **kwargs):
    """ViT-B/16 (12 layers, 12 heads, width 768); ``image_size`` defaults to 224."""
    weights = _resolve(ViT_B_16_Weights, weights, kwargs)
    _check_num_classes(weights, kwargs)
    image_size = kwargs.pop('image_size', 224)
    model = VisionTransformer(image_size=image_size, patch_size=16, num_layers=12, num_heads=12, hidden_dim=768,
                              mlp_dim=3072, **kwargs)
    return _load(model, weights)
