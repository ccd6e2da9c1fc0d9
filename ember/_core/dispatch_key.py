"""Dispatch keys and key sets.

A `DispatchKeySet` is a plain int used as a bitset: bit ``k.value`` is set when
key ``k`` is present, and a larger value means a higher priority, so the key to
run is ``ks.bit_length() - 1``. Plain ints keep the hot path to a few integer
operations (ARCHITECTURE rule 4); `keyset_names` turns one back into words.
"""
import enum


class DispatchKey(enum.IntEnum):
    """Keys in priority order: the last one listed wins."""
    # backends (lowest priority: reached after every transformation has run)
    PrivateUse1 = 1
    Meta = 2
    CUDA = 3
    CPU = 4
    # quantized tensors over a CPU backend (NOTE [quantized tensors] in _core/quantized.py): torch's QuantizedCPU,
    # above the dense backends and below every transformation, as the sparse layouts
    QuantizedCPU = 5
    # a sparse layout over a CPU backend: above the dense backends, below every transformation (as in torch)
    SparseCPU = 6
    # the compressed sparse layouts (CSR, CSC) over a CPU backend: torch's SparseCsrCPU, just above SparseCPU
    # (NOTE [sparse compressed layout] in _core/compressed.py)
    SparseCsrCPU = 7
    # Tensor subclasses that define __torch_dispatch__ (NOTE [tensor subclasses] in _dispatch/subclasses.py): below
    # Autograd and vmap, above the backends, as torch's Python key: autograd records on the subclass instance and the
    # subclass sees the aten operators, with what they decompose into
    PythonSubclass = 8
    # marks outputs as inference tensors (in the thread-local include set while inference_mode is on)
    InferenceMode = 9
    # vmap: set on BatchedTensors (NOTE [vmap] in _functorch/batching.py); below Autograd, so autograd records the
    # per-sample (logical) computation and its formulas run batched again (vmap(grad(f)))
    FuncTorchBatched = 10
    # transformations
    Autograd = 11
    AutocastCPU = 12
    AutocastCUDA = 13
    # forward-mode AD: set on tensors that carry a tangent (NOTE [forward AD] in autograd/forward.py); above Autograd,
    # so the primal result has its history before the tangent formula (which may read it) runs
    ForwardAD = 14
    Python = 15           # Python dispatch modes (tracing, profiling, fake tensors)
    # torch function modes (torch.overrides.TorchFunctionMode), and Tensor subclasses that define __torch_function__:
    # above every other key, so a mode or a subclass sees the public call before any transformation runs, as torch's
    # see its Python API (NOTE [torch function modes], NOTE [tensor subclasses])
    PythonTorchFunction = 16
    # alias keys: never in a key set, only in kernel tables
    CompositeExplicitAutograd = 20   # a kernel that works for every backend, below Autograd
    CompositeImplicitAutograd = 21   # a decomposition into other ops; autograd comes for free


BACKEND_KEYS = (DispatchKey.CPU, DispatchKey.CUDA, DispatchKey.Meta, DispatchKey.PrivateUse1)
AUTOGRAD_BIT = 1 << DispatchKey.Autograd
PYTHON_BIT = 1 << DispatchKey.Python
PYTHON_SUBCLASS_BIT = 1 << DispatchKey.PythonSubclass
TORCH_FUNCTION_BIT = 1 << DispatchKey.PythonTorchFunction
FORWARD_AD_BIT = 1 << DispatchKey.ForwardAD
BATCHED_BIT = 1 << DispatchKey.FuncTorchBatched
INFERENCE_BIT = 1 << DispatchKey.InferenceMode
BACKEND_MASK = sum(1 << k for k in BACKEND_KEYS)


def below(key):
    """The mask that keeps only keys of lower priority than ``key`` (used to redispatch)."""
    return (1 << int(key)) - 1


def highest(ks):
    return DispatchKey(ks.bit_length() - 1)


def keyset(*keys):
    ks = 0
    for k in keys:
        ks |= 1 << int(k)
    return ks


def keyset_names(ks):
    """``DispatchKeySet(Autograd, CPU)``: the keys of ``ks``, highest priority first."""
    names = [k.name for k in sorted(DispatchKey, reverse=True) if ks >> int(k) & 1]
    return 'DispatchKeySet(' + ', '.join(names) + ')'
