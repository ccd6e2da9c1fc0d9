"""torch.distributed.rpc: remote procedure calls between ranks. ember's distributed layer is collective (MPI) only,
so RPC is not available, as on a torch build without it: ``is_available()`` is False."""


def is_available():
    return False
