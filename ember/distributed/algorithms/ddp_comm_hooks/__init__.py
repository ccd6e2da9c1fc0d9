"""``torch.distributed.algorithms.ddp_comm_hooks``: how DDP reduces a bucket (``default_hooks``)."""
from . import default_hooks  # noqa: F401
