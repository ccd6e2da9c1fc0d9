"""torch.Tag (torch._C.Tag): the tags an operator declares (``core``, ``pointwise``, ``inplace_view``, ...), which
passes read to decide how an operator may be treated.

ember's declarations spell tags as strings (``'pointwise' in op.tags``, on the dispatcher's path), so a Tag is a
``str`` enum whose value is its name: ``Tag.pointwise == 'pointwise'``, and ``torch.Tag.pointwise in op.tags``
asks the same question as ember's own code. (torch numbers its members; code compares members, not numbers.)

>>> from ember._dispatch.tags import Tag
>>> Tag.pointwise in ('core', 'pointwise')
True
"""
import enum

_NAMES = ('core', 'cudagraph_unsafe', 'data_dependent_output', 'dynamic_output_shape', 'flexible_layout', 'generated',
          'inplace', 'inplace_view', 'maybe_aliasing_or_mutating', 'needs_contiguous_strides', 'needs_exact_strides',
          'needs_fixed_stride_order', 'nondeterministic_bitwise', 'nondeterministic_seeded', 'out', 'out_variant',
          'pointwise', 'pt2_compliant_tag', 'reduction', 'view_copy')


class _TagBase(str, enum.Enum):
    __str__ = enum.Enum.__str__         # 'Tag.core', as torch prints a member

    def __repr__(self):
        return f'<Tag.{self.name}>'


Tag = _TagBase('Tag', [(n, n) for n in _NAMES], module=__name__, qualname='Tag')
