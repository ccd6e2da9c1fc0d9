"""The Sobol engine's operators (torch.quasirandom.SobolEngine's primitives, aten's ``_sobol_engine_*``).

The state is a (dimension, MAXBIT) int64 tensor of direction numbers and ``quasi`` the last point drawn, as
integers; the kernels (ember/_backends/cpu/quasirandom.py) walk the Gray-code sequence. The in-place operators torch
declares (``_sobol_engine_ff_``, ``_sobol_engine_scramble_``, ``_sobol_engine_initialize_state_``) are generated
from functional ones (``inplace=True``), which torch lacks and ember does not make public.
"""
from .._core import dtype as D
from .._core.dtype import scalar_name
from .registry import declare


def _long_state(sobolstate, name='sobolstate'):
    if sobolstate._dtype is not D.int64:
        raise RuntimeError(f"{name} needs to be of type Long")


def _draw_meta(quasi, n, sobolstate, dimension, num_generated, dtype=None):
    _long_state(sobolstate)
    _long_state(quasi, 'quasi')
    if n < 0:      # a first draw(0) asks for n - 1 points
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}, {dimension}]")
    dtype = D.float32 if dtype is None else dtype
    if dtype not in (D.float32, D.float64):
        raise RuntimeError(f'"_sobol_engine_draw" not implemented for \'{scalar_name(dtype)}\'')
    return [((n, dimension), dtype), (tuple(quasi._a.shape), D.int64)]


def _ff_meta(self, n, sobolstate, dimension, num_generated):
    _long_state(sobolstate)
    _long_state(self, 'quasi')
    return tuple(self._a.shape), D.int64


def _scramble_meta(self, ltm, dimension):
    _long_state(self)
    return tuple(self._a.shape), D.int64


def _initialize_state_meta(self, dimension):
    _long_state(self)
    return tuple(self._a.shape), D.int64


declare('_sobol_engine_draw(Tensor quasi, int n, Tensor sobolstate, int dimension, int num_generated, '
        'ScalarType? dtype) -> (Tensor, Tensor)', meta=_draw_meta, method=False, differentiable=False,
        primitive_because="torch's composite walks the points over raw data pointers: the walk is an array kernel")
declare('_sobol_engine_ff(Tensor self, int n, Tensor sobolstate, int dimension, int num_generated) -> Tensor',
        meta=_ff_meta, inplace=True, method=False, function=False, differentiable=False)
declare('_sobol_engine_scramble(Tensor self, Tensor ltm, int dimension) -> Tensor', meta=_scramble_meta,
        inplace=True, method=False, function=False, differentiable=False)
declare('_sobol_engine_initialize_state(Tensor self, int dimension) -> Tensor', meta=_initialize_state_meta,
        inplace=True, method=False, function=False, differentiable=False)
