"""``torch.distributed.algorithms``: DDP communication hooks (``ddp_comm_hooks``); ``model_averaging`` is imported
by name, as torch's."""
from . import ddp_comm_hooks  # noqa: F401
