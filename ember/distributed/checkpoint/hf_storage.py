"""torch.distributed.checkpoint.hf_storage: DCP's Hugging Face storage types (see the package's note)."""
from . import StorageReader, StorageWriter


class HuggingFaceStorageReader(StorageReader):
    pass


class HuggingFaceStorageWriter(StorageWriter):
    pass
