"""torch.types: the type aliases annotations use (``_size``, ``Number``, ``Device``, ...)."""
import builtins
from typing import Any, IO, Sequence, Union  # noqa: F401

from ._tensor import Tensor, Size
from ._core.device import device as _device
from ._core.dtype import dtype as _dtype
from ._core.coo import layout as _layout
from ._core.storage import Storage

_bool, _int, _float, _complex, _str, _bytes = builtins.bool, builtins.int, builtins.float, builtins.complex, \
    builtins.str, builtins.bytes
SymInt = SymFloat = SymBool = builtins.int      # symbolic sizes are ints here (NOTE [symbolic sizes])
py_sym_types = (SymInt,)
_size = Union[Size, list, tuple]
_symsize = _size
_dispatchkey = Union[builtins.str, Any]
_qscheme = Any
IntLikeType = builtins.int
FloatLikeType = builtins.float
BoolLikeType = builtins.bool
Number = Union[builtins.int, builtins.float, builtins.bool]
_Number = (builtins.int, builtins.float, builtins.bool)
Device = Union[_device, builtins.str, builtins.int, None]
_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors = Union[Tensor, Sequence[Union[Tensor, None]]]
_TensorOrTensorsOrGradEdge = Union[Tensor, Sequence[Tensor], Any]
FileLike = Union[builtins.str, Any, IO[builtins.bytes]]
PySymType = Union[builtins.int, builtins.float, builtins.bool]
