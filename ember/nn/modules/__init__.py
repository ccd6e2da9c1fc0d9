"""The layers of ember.nn, one module per family (torch.nn.modules' layout)."""
from .module import Module
from .container import Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .linear import Identity, Linear, Bilinear, LazyLinear
from .flatten import Flatten, Unflatten
from .conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, LazyConv1d, LazyConv2d,
                   LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d)
from .pooling import (MaxPool1d, MaxPool2d, MaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d, AdaptiveAvgPool1d,
                      AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d,
                      LPPool1d, LPPool2d, LPPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d,
                      FractionalMaxPool2d, FractionalMaxPool3d)
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm, GroupNorm, RMSNorm, InstanceNorm1d,
                            InstanceNorm2d, InstanceNorm3d, LocalResponseNorm, CrossMapLRN2d, SyncBatchNorm,
                            LazyBatchNorm1d,
                            LazyBatchNorm2d, LazyBatchNorm3d, LazyInstanceNorm1d, LazyInstanceNorm2d,
                            LazyInstanceNorm3d)
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout
from .sparse import Embedding, EmbeddingBag
from .activation import (Threshold, ReLU, ReLU6, LeakyReLU, PReLU, ELU, SELU, CELU, GELU, SiLU, Mish, Sigmoid, Tanh,
                         Softplus, Hardtanh, Hardswish, Hardsigmoid, LogSigmoid, Softsign, Softmax, LogSoftmax,
                         Softmin, Softmax2d, GLU, Hardshrink, Softshrink, Tanhshrink, RReLU)
from .loss import (L1Loss, MSELoss, CrossEntropyLoss, NLLLoss, BCELoss, BCEWithLogitsLoss, KLDivLoss, SmoothL1Loss,
                   HuberLoss, SoftMarginLoss, MultiLabelSoftMarginLoss, CosineEmbeddingLoss, MarginRankingLoss,
                   HingeEmbeddingLoss, TripletMarginLoss, TripletMarginWithDistanceLoss, PoissonNLLLoss,
                   GaussianNLLLoss, MultiMarginLoss, MultiLabelMarginLoss, CTCLoss, NLLLoss2d)
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell
from .transformer import (MultiheadAttention, TransformerEncoderLayer, TransformerEncoder,
                          TransformerDecoderLayer, TransformerDecoder, Transformer)
from .padding import (ConstantPad1d, ConstantPad2d, ConstantPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d, ReflectionPad1d,
                      ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
                      CircularPad1d, CircularPad2d, CircularPad3d)
from .misc import (CosineSimilarity, PairwiseDistance, PixelShuffle, PixelUnshuffle, ChannelShuffle, Upsample,
                   UpsamplingNearest2d, UpsamplingBilinear2d, Fold, Unfold)
from .lazy import LazyModuleMixin
from .adaptive import AdaptiveLogSoftmaxWithLoss
from . import (lazy, batchnorm, instancenorm, distance, pixelshuffle, upsampling, fold, channelshuffle,  # noqa: F401
               flatten, utils, normalization, adaptive)  # torch's module paths: torch.nn.modules.pixelshuffle.PixelShuffle

__all__ = [n for n in dir() if n[:1].isupper()]
