"""Shuffler (``dp.shuffle``) and Sampler: the random-order IterDataPipes.

The Shuffler draws with Python's ``random.Random``, as torch's does, so a seed set with
``set_seed`` (or by ``graph_settings.apply_random_seed``) gives torch's order.
"""
import random
from collections.abc import Sized

import ember
from ...sampler import SequentialSampler
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe

__all__ = ['SamplerIterDataPipe', 'ShufflerIterDataPipe']


class SamplerIterDataPipe(IterDataPipe):
    """Yield what ``sampler(datapipe, ...)`` yields (default: SequentialSampler); the datapipe needs a length."""

    def __init__(self, datapipe, sampler=SequentialSampler, sampler_args=None, sampler_kwargs=None):
        if not isinstance(datapipe, Sized):
            raise AssertionError("Sampler class requires input datapipe implemented `__len__`")
        super().__init__()
        self.datapipe = datapipe
        self.sampler_args = () if sampler_args is None else sampler_args
        self.sampler_kwargs = {} if sampler_kwargs is None else sampler_kwargs
        self.sampler_kwargs['data_source'] = self.datapipe
        self.sampler = sampler(*self.sampler_args, **self.sampler_kwargs)

    def __iter__(self):
        return iter(self.sampler)

    def __len__(self):
        if isinstance(self.sampler, Sized):
            return len(self.sampler)
        raise TypeError(f"{type(self).__name__} instance doesn't have valid length")


@functional_datapipe('shuffle')
class ShufflerIterDataPipe(IterDataPipe):
    """Shuffle through a buffer of ``buffer_size`` items (functional name: ``shuffle``).

    The buffer fills first; then each new item replaces a uniformly chosen buffered one,
    which is yielded; at the end the buffer empties in random order. ``buffer_size`` at
    least the length of the source shuffles fully; 1 does not shuffle. Each iterator
    reseeds from the seed given by ``set_seed`` (consumed), else from ember's default generator.

    >>> from ember.utils.data.datapipes.iter import IterableWrapper
    >>> dp = IterableWrapper(range(5)).shuffle().set_seed(0)
    >>> sorted(dp)
    [0, 1, 2, 3, 4]
    >>> list(IterableWrapper(range(3)).shuffle().set_shuffle(False))
    [0, 1, 2]
    """

    def __init__(self, datapipe, *, buffer_size=10000, unbatch_level=0):
        super().__init__()
        self._buffer = []
        if buffer_size <= 0:
            raise AssertionError("buffer_size should be larger than 0")
        self.datapipe = datapipe if unbatch_level == 0 else datapipe.unbatch(unbatch_level=unbatch_level)
        self.buffer_size = buffer_size
        self._enabled = True
        self._seed = None
        self._rng = random.Random()

    def set_shuffle(self, shuffle=True):
        self._enabled = shuffle
        return self

    def set_seed(self, seed):
        self._seed = seed
        return self

    def __iter__(self):
        if not self._enabled:
            yield from self.datapipe
            return
        buffer, rng = self._buffer, self._rng
        for x in self.datapipe:
            if len(buffer) == self.buffer_size:
                idx = rng.randint(0, len(buffer) - 1)
                val, buffer[idx] = buffer[idx], x
                yield val
            else:
                buffer.append(x)
        while buffer:
            yield buffer.pop(rng.randint(0, len(buffer) - 1))

    def __len__(self):
        if isinstance(self.datapipe, Sized):
            return len(self.datapipe)
        raise TypeError(f"{type(self).__name__} instance doesn't have valid length")

    def reset(self):
        self._buffer = []
        if self._enabled:
            if self._seed is None:   # torch draws the seed from its default generator
                self._seed = int(ember.empty((), dtype=ember.int64).random_().item())
            self._rng.seed(self._seed)
            self._seed = None

    def __getstate__(self):
        state = (self.datapipe, self.buffer_size, self._enabled, self._seed, self._buffer, self._rng.getstate(),
                 self._valid_iterator_id, self._number_of_samples_yielded)
        hook = IterDataPipe.getstate_hook
        return hook(state) if hook is not None else state

    def __setstate__(self, state):
        (self.datapipe, self.buffer_size, self._enabled, self._seed, self._buffer, rng_state,
         self._valid_iterator_id, self._number_of_samples_yielded) = state
        self._rng = random.Random()
        self._rng.setstate(rng_state)
