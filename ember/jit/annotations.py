"""torch.jit.annotations: the type names TorchScript code imports (they are Python's typing names; ember runs
such code eagerly, where the annotations are only annotations)."""
from typing import Any, Callable, Dict, List, Optional, Tuple, Union  # noqa: F401

BroadcastingList1 = BroadcastingList2 = BroadcastingList3 = List      # torch's "int or list of ints" annotations
