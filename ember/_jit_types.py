"""TorchScript's type objects that Python code names: ``torch.Type`` and ``torch.DeviceObjType`` /
``torch.StreamObjType`` (in annotations such as ``device: str | torch.DeviceObjType``). ember has no TorchScript
compiler, so they are classes no Python value is an instance of, as in torch; ``get()`` gives the type object."""


class Type:
    """The base of TorchScript's types (torch.Type)."""

    def __repr__(self):
        return type(self).__name__.replace('ObjType', '')

    __str__ = __repr__

    @classmethod
    def get(cls):
        """The type object (``torch.DeviceObjType.get()`` prints as ``Device``)."""
        return cls()

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))


class DeviceObjType(Type):
    """The TorchScript type of ``torch.device`` values."""


class StreamObjType(Type):
    """The TorchScript type of ``torch.Stream`` values."""
