"""ember: PyTorch's architecture and API, rebuilt in Python on NumPy.

>>> import ember as torch
>>> x = torch.ones(2, 3, requires_grad=True)
>>> (x * 2).sum().backward()
>>> x.grad
tensor([[2., 2., 2.],
        [2., 2., 2.]])
"""
__version__ = '0.1.0'

from ._core.dtype import (dtype, bool_ as bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32,
                          float64, complex64, complex128, promote_types, can_cast, result_type as _result_type,
                          get_default_dtype, set_default_dtype, finfo, iinfo, uint16, uint32, uint64,
                          float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu, complex32,
                          qint8, quint8, qint32, quint4x2, quint2x4, uint1, uint2, uint3, uint4, uint5, uint6,
                          uint7, int1, int2, int3, int4, int5, int6, int7)
from ._core.device import device, set_default_device, get_default_device
from ._core.dispatch_key import DispatchKey
from ._dispatch.tags import Tag  # noqa: E402,F401  torch.Tag
from ._core.storage import UntypedStorage
from .storage import TypedStorage  # noqa: E402,F401
from .storage import (FloatStorage, DoubleStorage, HalfStorage, BFloat16Storage, LongStorage, IntStorage,  # noqa: E402,F401,E501
                      ShortStorage, CharStorage, ByteStorage, BoolStorage, ComplexFloatStorage, ComplexDoubleStorage)
from ._tensor import Tensor, Size
from ._creation import tensor, as_tensor, from_numpy, from_dlpack
from ._tensor_str import set_printoptions
from ._backends.cpu._parallel import set_num_threads, get_num_threads
from .random import Generator, manual_seed, seed, initial_seed, get_rng_state, set_rng_state, default_generator

half, float, double, long, int, short, cfloat, cdouble = float16, float32, float64, int64, int32, int16, complex64, complex128
chalf = complex32
uint8 = uint8
from ._core.memory_format import (memory_format, contiguous_format, preserve_format, channels_last,  # noqa: E402
                                  channels_last_3d)
from ._core.coo import layout, strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, jagged
from ._core.quantized import (qscheme, per_tensor_affine, per_channel_affine, per_tensor_symmetric,  # noqa: E402
                              per_channel_symmetric, per_channel_affine_float_qparams)

# operator declarations (the table), then the backends' kernels, then autograd's kernels
from ._ops import load_all as _load_ops
_load_ops()
from ._backends.cpu import register_all as _reg_cpu
from ._backends.meta import register_all as _reg_meta
_reg_cpu()
_reg_meta()
from ._backends.sparse import register_all as _reg_sparse
_reg_sparse()
from ._backends.quantized import register_all as _reg_quantized     # NOTE [quantized tensors]
_reg_quantized()
from ._ops.quantized import register_storage_ops as _reg_quantized_storage
_reg_quantized_storage()
from ._core.device import LOADERS as _loaders     # NOTE [backend loaders]: CUDA on CuPy loads on first use
from ._backends import cuda as _cuda_backend
_loaders['cuda'] = _cuda_backend.load
from .autograd import kernels as _ag_kernels
_ag_kernels.register_all()
from ._functorch import batching as _batching      # NOTE [vmap]: the FuncTorchBatched kernels
_batching.register_all()
from ._dispatch import autocast as _autocast      # NOTE [autocast key]: AutocastCPU kernels from the policy table
from ._ops.autocast_policy import CPU_POLICY as _CPU_AUTOCAST_POLICY
_autocast.register_all(_CPU_AUTOCAST_POLICY)
from ._dispatch.autocast import (is_autocast_enabled, set_autocast_enabled, get_autocast_dtype, set_autocast_dtype,
                                 get_autocast_cpu_dtype, get_autocast_gpu_dtype, is_autocast_cache_enabled,
                                 set_autocast_cache_enabled, clear_autocast_cache, autocast_increment_nesting,
                                 autocast_decrement_nesting, is_autocast_cpu_enabled, set_autocast_cpu_enabled,
                                 set_autocast_cpu_dtype, set_autocast_gpu_dtype)

from . import _functions, ops, library, debug, utils, data
from ._dispatch import modes as _modes  # registers the Python-mode fallback
from ._dispatch import subclasses as _subclasses  # the fallbacks of __torch_function__ and __torch_dispatch__
from ._ops import public as _public
from . import return_types  # noqa: F401,E402

_public.build(Tensor, _functions.__dict__, _public.NN_FUNCTIONAL)
_public.install_operators(Tensor)
globals().update({k: v for k, v in _functions.__dict__.items() if not k.startswith('__')})

from . import autograd
from .serialization import save, load, PyTorchFileReader  # noqa: F401
from . import __config__  # noqa: E402,F401  torch.__config__.show()
from . import serialization
from .autograd import no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled, is_inference_mode_enabled
from ._python_functions import *  # noqa: F401,F403  public functions written in Python, not operators
from . import linalg  # noqa: E402  the torch.linalg namespace
from . import special  # noqa: E402  the torch.special namespace
from . import fft  # noqa: E402  the torch.fft namespace
from . import nn  # noqa: E402  after every operator exists: nn.functional and the modules use them at import
from . import _VF  # noqa: E402,F401  torch._VF: the functions under the names torch's modules call
from .jit import ScriptModule, ScriptFunction  # noqa: E402,F401  torch.ScriptModule: an nn.Module base (JIT disabled)

# torch also exposes these nn.functional operators at top level (torch.max_pool2d, torch.batch_norm, ...)
for _n in ('max_pool1d', 'max_pool2d', 'max_pool3d', 'avg_pool1d', 'adaptive_avg_pool1d', 'adaptive_max_pool1d',
           'group_norm', 'rms_norm', 'cosine_similarity', 'pairwise_distance',
           'pdist', 'pixel_shuffle', 'pixel_unshuffle',
           'channel_shuffle', 'prelu', 'rrelu', 'selu', 'celu', 'hardshrink', 'threshold', 'bilinear', 'cdist'):
    if _n not in globals() and hasattr(nn.functional, _n):
        globals()[_n] = getattr(nn.functional, _n)


# ... and these with aten's signatures, which differ from nn.functional's: the dropouts take ``train`` as a
# required third argument, batch_norm and instance_norm take weight and bias before the running statistics
def _top_dropout(fn, name):
    def dropout(input, p, train):
        return fn(input, p, train)
    dropout.__name__ = dropout.__qualname__ = name
    return dropout


dropout = _top_dropout(nn.functional.dropout, 'dropout')
alpha_dropout = _top_dropout(nn.functional.alpha_dropout, 'alpha_dropout')
feature_dropout = _top_dropout(_functions.feature_dropout, 'feature_dropout')
feature_alpha_dropout = _top_dropout(nn.functional.feature_alpha_dropout, 'feature_alpha_dropout')


for _n in ('dropout', 'alpha_dropout', 'feature_alpha_dropout', 'batch_norm', 'instance_norm'):
    if getattr(nn.functional, _n).__module__ == __name__:      # generated ones named ember.<n>: they pickle by
        getattr(nn.functional, _n).__module__ = nn.functional.__name__     # reference to nn.functional's name


def dropout_(input, p, train):
    return nn.functional.dropout(input, p, train, inplace=True)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    return nn.functional.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    return nn.functional.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum,
                                       eps)


def result_type(tensor1, tensor2):
    return _result_type(tensor1, tensor2)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(t):
    return t.is_floating_point()


def numel(t):
    return t.numel()


def _assert(condition, message):
    """``assert condition, message`` that symbolic tracing records (torch._assert)."""
    assert condition, message


from ._dispatch.torch_function import public_function as _public_function  # noqa: E402
_assert = _public_function(_assert)     # NOTE [__torch_function__]: a traced condition records the call


def __getattr__(name):
    # ember.fx and ember.export are imported on first use (``import torch; torch.fx.symbolic_trace(m)`` works as
    # in torch)
    import importlib
    if name in ('fx', 'export', '_C', '_dynamo', 'ao', 'quantization'):
        return importlib.import_module(f'ember.{name}')
    if name in ('SymInt', 'SymFloat', 'SymBool'):      # torch.SymInt: the symbolic sizes of ember.fx
        return getattr(importlib.import_module('ember.fx.experimental.symbolic_shapes'), name)
    if name in _DEPRECATED_HAS:          # torch's deprecated build flags, read from backends as torch's say
        where = _DEPRECATED_HAS[name]
        if name in ('has_cuda', 'has_mps', 'has_cudnn', 'has_mkldnn'):
            from ._warn import warnings
            warnings.warn(f"'{name}' is deprecated, please use 'torch.{where}()'", UserWarning, stacklevel=2)
        if where is None:           # NumPy's LAPACK and FFT are always there
            return True
        module, fn = where.rsplit('.', 1)
        return getattr(importlib.import_module(f'ember.{module}'), fn)()
    raise AttributeError(f"module 'ember' has no attribute '{name}'")


_DEPRECATED_HAS = {'has_cuda': 'backends.cuda.is_built', 'has_mps': 'backends.mps.is_built',
                   'has_cudnn': 'backends.cudnn.is_available', 'has_mkldnn': 'backends.mkldnn.is_available',
                   'has_openmp': 'backends.openmp.is_available', 'has_mkl': 'backends.mkl.is_available',
                   'has_lapack': None, 'has_spectral': None}

from . import optim  # noqa: E402  (after the operators: optim uses the public API)

# --- device namespaces, switches and legacy types (torch's CPU-only answers; NOTE [absent devices]) ---
from . import cuda, accelerator, backends, mps, xpu  # noqa: E402
from ._streams import Stream, Event  # noqa: E402,F401  torch.Stream / torch.Event
from .backends import (use_deterministic_algorithms, are_deterministic_algorithms_enabled,  # noqa: E402
                       is_deterministic_algorithms_warn_only_enabled, set_float32_matmul_precision,
                       get_float32_matmul_precision)
from ._legacy_types import LEGACY as _LEGACY, tensortype  # noqa: E402
globals().update(_LEGACY)
from . import cpu, jit, onnx, testing, version, compiler, hub  # noqa: E402,F401  torch.cpu, torch.testing; torch.jit (deliberately absent: each name says why)
from . import amp  # noqa: E402  autocast and GradScaler (front end)
from .amp import autocast, GradScaler  # noqa: E402  torch.GradScaler is torch.amp.GradScaler


class OutOfMemoryError(RuntimeError):
    """torch.OutOfMemoryError (torch.cuda.OutOfMemoryError is the same class): what an allocator raises when a
    device has no memory left; programs catch it to retry with smaller batches."""
import ember.cpu.amp, ember.cuda.amp  # noqa: E402,F401  torch.cpu.amp / torch.cuda.amp (deprecated aliases)
from . import distributions  # noqa: E402  (a front end on the public API, as optim)
from . import signal  # noqa: E402,F401  torch.signal.windows (a front end on the public API)
from . import profiler, memory  # noqa: E402  torch.profiler; allocator statistics (ember.memory)
from ._ops.sparse import install_methods as _install_sparse
_install_sparse(Tensor)
from ._ops.sparse_compressed import install_methods as _install_compressed
_install_compressed(Tensor)
from ._ops.quantized import install_methods as _install_quantized
_install_quantized(Tensor)
from . import sparse  # noqa: E402  torch.sparse
from . import nested  # noqa: E402,F401  torch.nested: jagged tensors (a front end on the subclass hooks)
from . import func  # noqa: E402  torch.func: composable transforms (a front end on autograd)
from .func import vmap  # noqa: E402  torch.vmap
from ._functorch import vmap as _functorch_vmap, apis as _functorch_apis  # noqa: E402,F401  (torch imports them)
from .sparse import (sparse_coo_tensor, sparse_csr_tensor, sparse_csc_tensor, sparse_compressed_tensor,  # noqa: E402
                     spmm)
from . import _higher_order_ops  # noqa: E402,F401  torch.cond, torch.while_loop (NOTE [control-flow operators])
from ._higher_order_ops import cond, while_loop  # noqa: E402,F401
from . import futures, distributed  # noqa: E402,F401  torch.futures, torch.distributed (mpi4py is imported only by init_process_group)
from .futures import Future  # noqa: E402,F401  torch.Future (torch's is the C base of futures.Future; one class here)
from . import _einops as _einops_backend  # noqa: E402  einops on ember tensors (registered when einops is imported)
_einops_backend.install()

from . import quasirandom  # noqa: E402,F401  torch.quasirandom.SobolEngine
from ._jit_types import (Type, DeviceObjType, StreamObjType, TensorType, IntType, FloatType, ComplexType,  # noqa
                         BoolType, StringType, NoneType, NumberType, AnyType, ListType, OptionalType, TupleType,
                         DictType)  # noqa: E402,F401  TorchScript's type classes
_subclasses.name_methods(Tensor)     # after the last module that adds methods: what __torch_function__ sees as func
