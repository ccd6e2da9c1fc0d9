"""The MapDataPipes ember provides, under torch's short names."""
from .callable import MapperMapDataPipe as Mapper
from .grouping import BatcherMapDataPipe as Batcher
from .utils import SequenceWrapperMapDataPipe as SequenceWrapper

__all__ = ['Batcher', 'Mapper', 'SequenceWrapper']
