"""Random number generators: ``ember.Generator``, ``manual_seed`` and the default generator.

A Generator wraps a NumPy ``Generator`` (PCG64). Random kernels receive the
NumPy generator itself (adapters unwrap ``Generator?`` arguments), so a
backend never needs to know ember's class. Streams differ from torch's
(Mersenne Twister with torch's own transforms): seeded runs are reproducible
within ember, and tests compare distributions with torch, not values.
"""
import json

import numpy as np


class Generator:
    """torch.Generator: ``manual_seed``, ``seed``, ``initial_seed``, ``get_state``/``set_state``.

    >>> g = Generator().manual_seed(0)
    >>> a = g._rng.random(); _ = g.manual_seed(0); a == g._rng.random()
    True
    """

    def __init__(self, device='cpu'):
        from ._core.device import device as _dev
        self.device = _dev(device)
        self._seed = 67280421310721
        self._rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed):
        seed = int(seed)
        if not -0x8000_0000_0000_0000 <= seed <= 0xffff_ffff_ffff_ffff:
            raise RuntimeError(f"Overflow when unpacking long long")
        self._seed = seed & 0xffff_ffff_ffff_ffff
        self._rng = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self):
        s = int.from_bytes(np.random.SeedSequence().generate_state(2, np.uint32).tobytes(), 'little')
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The state as a uint8 tensor (a JSON encoding of the bit generator's state)."""
        from ._creation import tensor
        st = self._rng.bit_generator.state
        raw = json.dumps({'seed': self._seed, 'state': st}).encode()
        return tensor(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, new_state):
        raw = bytes(np.asarray(new_state, dtype=np.uint8).tobytes())
        try:
            d = json.loads(raw.decode())
            bg = np.random.PCG64()
            bg.state = d['state']
        except (ValueError, KeyError, TypeError) as e:
            raise RuntimeError("Invalid generator state: expected a state from Generator.get_state()") from e
        self._seed = d['seed']
        self._rng = np.random.Generator(bg)
        return self


default_generator = Generator()


def manual_seed(seed):
    """Seed ember's default generator (returns it, like torch.manual_seed)."""
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)


class fork_rng:
    """Context manager restoring the default generator's state on exit."""

    def __init__(self, devices=None, enabled=True):
        self.enabled = enabled

    def __enter__(self):
        if self.enabled:
            self._state = get_rng_state()

    def __exit__(self, *exc):
        if self.enabled:
            set_rng_state(self._state)
