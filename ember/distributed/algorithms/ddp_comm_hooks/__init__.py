"""``torch.distributed.algorithms.ddp_comm_hooks``: how DDP reduces a bucket (``default_hooks``; post-local SGD,
``post_localSGD_hook``; PowerSGD compression, ``powerSGD_hook``)."""
from . import default_hooks, post_localSGD_hook, powerSGD_hook  # noqa: F401
