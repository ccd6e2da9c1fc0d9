"""``int_oo``: the unbounded end of an integer range (torch.utils._sympy.numbers.int_oo), printed as torch prints it."""

__all__ = ['int_oo', 'IntInfinity']


class IntInfinity:
    """Greater than every int; the one instance is ``int_oo``."""
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self):
        return 'int_oo'

    __str__ = __repr__

    def __eq__(self, other):
        return other is self or other == float('inf')

    def __hash__(self):
        return hash(float('inf'))

    def __lt__(self, other):
        return False

    def __le__(self, other):
        return self == other

    def __gt__(self, other):
        return not self == other

    def __ge__(self, other):
        return True

    def __reduce__(self):
        return (IntInfinity, ())


int_oo = IntInfinity()
