"""Memory formats (``torch.channels_last``, ...): the dimension order a tensor's memory follows.

A memory format is its own name as a string (``ember.channels_last == 'channels_last'``: ember's kernels and
layouts compare names), of the type ``memory_format`` so that annotations and ``isinstance`` checks work as with
torch's, and it prints as torch's does.
"""
from . import naming


class memory_format(str):
    __slots__ = ()

    def __repr__(self):
        return f'{naming.shown}.{str.__str__(self)}'

    __str__ = __repr__

    def __reduce__(self):
        return (memory_format, (str.__str__(self),))


contiguous_format = memory_format('contiguous_format')
preserve_format = memory_format('preserve_format')
channels_last = memory_format('channels_last')
channels_last_3d = memory_format('channels_last_3d')
