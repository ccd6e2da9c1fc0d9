"""Random number generators: ``ember.Generator``, ``manual_seed`` and the default generator.

A Generator holds torch's CPU engine, a Mersenne Twister (mt19937) seeded as torch seeds it, inside a NumPy
``Generator`` whose bit generator it is. Random kernels receive that NumPy object (adapters unwrap
``Generator?`` arguments), so a backend never needs to know ember's class: the kernels of ``rand``,
``randn``, ``uniform_``, ``normal_``, ``randint``, ``random_`` and ``randperm`` draw its 32-bit outputs as
torch does and give torch's values for the same seed (NOTE [torch's random streams] in
_backends/cpu/_torch_random.py); the other distributions use NumPy's methods on the same engine.
"""
import json

import numpy as np


class _Stream(np.random.Generator):
    """NumPy's Generator on the mt19937 engine, plus the state torch keeps beside its engine: the second
    sample of the last small normal_ draw (``next_double_normal``, reset by seeding)."""

    def __init__(self, bit_generator):
        super().__init__(bit_generator)
        self.next_double_normal = None


def _mt19937(seed):
    """torch's engine for ``seed``: mt19937's init_genrand on the seed's low 32 bits, which is also NumPy's
    legacy seeding of its MT19937 (no draw made yet: the first output twists the state)."""
    bg = np.random.MT19937()
    key = np.random.RandomState(seed & 0xffff_ffff).get_state()[1]
    bg.state = {'bit_generator': 'MT19937', 'state': {'key': key, 'pos': 624}}
    return bg


class Generator:
    """torch.Generator: ``manual_seed``, ``seed``, ``initial_seed``, ``get_state``/``set_state``.

    >>> g = Generator().manual_seed(0)
    >>> a = g._rng.random(); _ = g.manual_seed(0); a == g._rng.random()
    True
    """

    def __init__(self, device='cpu'):
        from ._core.device import device as _dev
        self.device = _dev(device)
        self.manual_seed(67280421310721)       # torch's default_rng_seed_val

    def manual_seed(self, seed):
        seed = int(seed)
        if not -0x8000_0000_0000_0000 <= seed <= 0xffff_ffff_ffff_ffff:
            raise RuntimeError(f"Overflow when unpacking long long")
        self._seed = seed & 0xffff_ffff_ffff_ffff
        self._rng = _Stream(_mt19937(self._seed))
        return self

    def seed(self):
        s = int.from_bytes(np.random.SeedSequence().generate_state(2, np.uint32).tobytes(), 'little')
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The state as a uint8 tensor (a JSON encoding of the engine's state, the seed and the kept normal)."""
        from ._creation import tensor
        st = self._rng.bit_generator.state
        st = {'key': st['state']['key'].tolist(), 'pos': st['state']['pos']}
        raw = json.dumps({'seed': self._seed, 'mt19937': st, 'next_double_normal': self._rng.next_double_normal})
        return tensor(np.frombuffer(raw.encode(), dtype=np.uint8).copy())

    def set_state(self, new_state):
        raw = bytes(np.asarray(new_state, dtype=np.uint8).tobytes())
        try:
            d = json.loads(raw.decode())
            bg = np.random.MT19937()
            bg.state = {'bit_generator': 'MT19937',
                        'state': {'key': np.array(d['mt19937']['key'], np.uint32), 'pos': d['mt19937']['pos']}}
            seed = d['seed']
        except (ValueError, KeyError, TypeError) as e:
            raise RuntimeError("Invalid generator state: expected a state from Generator.get_state()") from e
        self._seed = seed
        self._rng = _Stream(bg)
        self._rng.next_double_normal = d.get('next_double_normal')
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
