"""torch.distributed.rpc: remote procedure calls between ranks. ember's distributed layer is collective (MPI) only,
so RPC is not available, as on a torch build without it: ``is_available()`` is False. The API's names exist (api.py)
and raise torch's error for a framework not initialized."""
from .api import RRef, rpc_sync, rpc_async, remote, get_worker_info, shutdown  # noqa: F401


def is_available():
    return False
