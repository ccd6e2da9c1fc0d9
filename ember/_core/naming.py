"""The namespace ember's objects print under.

``ember.float32`` prints as ``ember.float32``; under ``ember run`` (``ember.compat.install``), where the program
imports ember as torch, it prints as ``torch.float32``, as does every repr that names its module: dtypes, layouts,
``Size``, ``return_types``, the legacy tensor type names, streams and events. A program's printed output then reads
as torch's, and code that parses those strings (``str(t.dtype).replace('torch.', '')``) gets what torch gives it.
ember's own code never parses them (it reads ``dtype.name``).
"""
shown = 'ember'


def show_as(namespace):
    global shown
    shown = namespace
