"""torch.distributed.checkpoint (DCP): saving and loading state dicts sharded over ranks.

ember has no DCP: its state dicts are whole on every rank (DistributedDataParallel), and ``ember.save``/``load``
write torch's single-file format. The storage reader and writer types exist so that libraries importing them
(transformers' checkpoint utilities) load; making one raises an error saying so. ``state_dict`` (names for the
model's and optimizer's state, ``get_optimizer_state_dict``) works: it needs no sharded storage.
"""

_WHY = ("ember has no torch.distributed.checkpoint: its state dicts are whole on every rank; save them with "
        "ember.save from one rank")


class _Absent:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__}: {_WHY}")


class StorageReader(_Absent):
    pass


class StorageWriter(_Absent):
    pass


class FileSystemReader(StorageReader):
    pass


class FileSystemWriter(StorageWriter):
    pass


def save(state_dict, *args, **kwargs):
    raise NotImplementedError(f"save: {_WHY}")


def load(state_dict, *args, **kwargs):
    raise NotImplementedError(f"load: {_WHY}")


def async_save(state_dict, *args, **kwargs):
    """``save`` in the background (torch returns a Future); ember has no DCP ``save`` to run."""
    raise NotImplementedError(f"async_save: {_WHY}")
