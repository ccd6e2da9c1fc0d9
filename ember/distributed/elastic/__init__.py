"""torch.distributed.elastic: fault-tolerant launching. ember's launcher (``emberrun``, ember/distributed/run.py)
and its rendezvous (ember/distributed/_elastic.py) do the launching; this package holds the pieces programs
import: ``multiprocessing.errors`` (``@record``, ``ChildFailedError``)."""
