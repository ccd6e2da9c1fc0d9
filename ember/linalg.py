"""ember.linalg: torch.linalg's functions (matrix products, decompositions, solvers and norms).

Each is an operator declared in ember/_ops/linalg.py (or a composite of them); this module gives
them their torch.linalg names.
"""
from ._ops.registry import DECLS as _D

matmul = _D['matmul'].op.call
cross = _D['linalg_cross'].op.call

