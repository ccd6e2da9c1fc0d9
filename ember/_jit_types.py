"""TorchScript's type objects that Python code names: ``torch.Type``, ``torch.DeviceObjType`` /
``torch.StreamObjType`` (in annotations such as ``device: str | torch.DeviceObjType``), ``torch.TensorType`` and
the other scalar and container types (open_clip imports ``TensorType``). ember has no TorchScript compiler, so they
are classes no Python value is an instance of, as in torch; ``get()`` gives a type object, which prints, compares
and answers ``kind()`` as torch's, and the container types (``ListType(IntType.get())``) hold their elements."""


class Type:
    """The base of TorchScript's types (torch.Type)."""

    _name = None

    def __repr__(self):
        return self._name or type(self).__name__.replace('ObjType', '')

    def kind(self):
        return type(self).__name__

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


def _scalar(cls_name, shown, doc):
    return type(cls_name, (Type,), {'_name': shown, '__doc__': doc, '__module__': __name__})


TensorType = _scalar('TensorType', 'Tensor', 'The TorchScript type of tensors.')
IntType = _scalar('IntType', 'int', 'The TorchScript type of ints.')
FloatType = _scalar('FloatType', 'float', 'The TorchScript type of floats.')
ComplexType = _scalar('ComplexType', 'complex', 'The TorchScript type of complex numbers.')
BoolType = _scalar('BoolType', 'bool', 'The TorchScript type of bools.')
StringType = _scalar('StringType', 'str', 'The TorchScript type of strings.')
NoneType = _scalar('NoneType', 'NoneType', 'The TorchScript type of None.')
NumberType = _scalar('NumberType', 'number', 'The TorchScript type of any number.')
AnyType = _scalar('AnyType', 'Any', 'The TorchScript type every value has.')


class _Container(Type):
    """A type made of others (``List[int]``); equal when the kind and the element types are."""

    def __init__(self, *elements):
        self._elements = elements

    def __repr__(self):
        return f"{self._name}[{', '.join(map(repr, self._elements))}]"

    __str__ = __repr__

    def __eq__(self, other):
        return type(self) is type(other) and self._elements == other._elements

    def __hash__(self):
        return hash((type(self), self._elements))

    def containedTypes(self):
        return list(self._elements)


class ListType(_Container):
    _name = 'List'

    def getElementType(self):
        return self._elements[0]

    @classmethod
    def ofInts(cls):
        return cls(IntType.get())

    @classmethod
    def ofFloats(cls):
        return cls(FloatType.get())

    @classmethod
    def ofBools(cls):
        return cls(BoolType.get())

    @classmethod
    def ofStrings(cls):
        return cls(StringType.get())

    @classmethod
    def ofTensors(cls):
        return cls(TensorType.get())


class OptionalType(_Container):
    _name = 'Optional'

    def getElementType(self):
        return self._elements[0]

    @classmethod
    def ofTensor(cls):
        return cls(TensorType.get())


class TupleType(_Container):
    _name = 'Tuple'

    def __init__(self, elements):
        super().__init__(*elements)

    def elements(self):
        return list(self._elements)


class DictType(_Container):
    _name = 'Dict'

    def getKeyType(self):
        return self._elements[0]

    def getValueType(self):
        return self._elements[1]
