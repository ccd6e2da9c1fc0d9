"""Internals of the DataLoader: collation, fetchers, worker processes and the shared-memory transport."""
from . import collate, fetch, shm, worker  # noqa: F401
