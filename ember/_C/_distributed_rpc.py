"""``torch._C._distributed_rpc``: the RPC framework's types. ember has no RPC framework
(``torch.distributed.rpc.is_available()`` is False), so no remote reference can exist; the type is here for the
``isinstance`` checks libraries make on the values they are handed (torchrl's collectors)."""

__all__ = ['PyRRef']


class PyRRef:
    """A reference to a value owned by another RPC worker; ember makes none."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("ember has no RPC framework (torch.distributed.rpc.is_available() is False): "
                           "remote references cannot be made")
