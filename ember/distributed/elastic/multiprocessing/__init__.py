"""torch.distributed.elastic.multiprocessing: the worker processes' error reporting (``errors``)."""
