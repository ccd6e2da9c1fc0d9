"""Random number generators: ``ember.Generator``, ``manual_seed`` and the default generator.

A Generator holds torch's CPU engine, a Mersenne Twister (mt19937) seeded as torch seeds it, inside a NumPy
``Generator`` whose bit generator it is. Random kernels receive that NumPy object (adapters unwrap
``Generator?`` arguments), so a backend never needs to know ember's class: the kernels of ``rand``,
``randn``, ``uniform_``, ``normal_``, ``randint``, ``random_`` and ``randperm`` draw its 32-bit outputs as
torch does and give torch's values for the same seed (NOTE [torch's random streams] in
_backends/cpu/_torch_random.py), as do the gamma, Poisson, binomial and Dirichlet samplers (NOTE [torch's
rejection samplers] in _backends/cpu/_torch_samplers.py).
"""
import numpy as np


class _Stream(np.random.Generator):
    """NumPy's Generator on the mt19937 engine, plus the state torch keeps beside its engine: the second
    sample of the last small normal_ draw (``next_double_normal``, reset by seeding)."""

    def __init__(self, bit_generator):
        super().__init__(bit_generator)
        self.next_double_normal = None


try:
    from numpy.random.bit_generator import ISeedSequence

    class _Blank(ISeedSequence):
        """Zeros for MT19937's constructor, whose state init_genrand replaces at once: the default, a SeedSequence
        of OS entropy hashed into 624 words, made a seeded Generator cost ~0.3 ms (torch: ~10 µs; torchsde makes one
        per noise draw)."""

        def generate_state(self, n_words, dtype=np.uint32):
            return np.zeros(n_words, dtype)
    _BLANK = _Blank()
except ImportError:     # pragma: no cover - other NumPy versions
    _BLANK = None


def _mt19937(seed):
    """torch's engine for ``seed``: mt19937's init_genrand on the seed's low 32 bits, which is also NumPy's
    legacy seeding of its MT19937 (no draw made yet: the first output twists the state)."""
    if _BLANK is not None and hasattr(np.random.MT19937, '_legacy_seeding'):
        bg = np.random.MT19937(_BLANK)
        bg._legacy_seeding(seed & 0xffff_ffff)       # what RandomState(seed) runs: init_genrand, position 624
        return bg
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
        self.__dict__.pop('_rng', None)     # the engine is seeded at its first use (__getattr__)
        return self

    def __getattr__(self, name):
        """``_rng``, the engine, made from the seed when first used: seeding mt19937 costs ~30 µs, and
        ``Generator().manual_seed(s)`` would otherwise seed twice (torchsde makes one per noise draw)."""
        if name != '_rng' or '_seed' not in self.__dict__:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        rng = self._rng = _Stream(_mt19937(self._seed))
        return rng

    def seed(self):
        s = int.from_bytes(np.random.SeedSequence().generate_state(2, np.uint32).tobytes(), 'little')
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The state as torch's 5056-byte uint8 tensor (its CPUGeneratorImplState): a state saved by torch loads
        here and one saved here loads in torch."""
        from ._creation import tensor
        st = self._rng.bit_generator.state['state']
        pos, kept = int(st['pos']), self._rng.next_double_normal
        s = np.zeros((), _STATE)
        s['seed'], s['seeded'] = self._seed, 1
        s['left'], s['next'] = 625 - pos, pos         # torch's mt19937 counts down what is left before the twist
        if pos == 624 and np.array_equal(st['key'], _mt19937(self._seed).state['state']['key']):
            s['next'] = 0                              # seeded, nothing drawn yet: torch has not moved its index
        s['state'] = st['key']
        if kept is not None:
            s['normal_y'], s['normal_is_valid'] = kept, 1
        return tensor(np.frombuffer(s.tobytes(), dtype=np.uint8).copy())

    def set_state(self, new_state):
        from ._core.tensor_impl import TensorImpl
        if not isinstance(new_state, TensorImpl) or new_state.dtype.name != 'uint8':
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = np.asarray(new_state.detach().numpy(), dtype=np.uint8).tobytes()
        if len(raw) != _STATE.itemsize:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE.itemsize} but found the input RNG "
                               f"state size to be {len(raw)}")
        s = np.frombuffer(raw, _STATE)[0]
        if int(s['seeded']) != 1 or not 1 <= int(s['left']) <= 624 or int(s['next']) > 624:
            raise RuntimeError("Invalid mt19937 state")
        bg = np.random.MT19937()
        pos = 625 - int(s['left'])
        bg.state = {'bit_generator': 'MT19937', 'state': {'key': s['state'].astype(np.uint32), 'pos': pos}}
        self._seed = int(s['seed']) & 0xffff_ffff_ffff_ffff
        self._rng = _Stream(bg)
        self._rng.next_double_normal = float(s['normal_y']) if s['normal_is_valid'] else None
        return self


# torch's CPUGeneratorImplState, byte for byte (x86-64 layout, 5056 bytes): the seed, mt19937's countdown, position and 624 words (each widened to 64 bits), the kept
# double normal of Box-Muller, a kept float normal ember never makes
_STATE = np.dtype({'names': ['seed', 'left', 'seeded', 'next', 'state', 'normal_x', 'normal_y', 'normal_rho',
                             'normal_is_valid', 'float_normal', 'float_normal_is_valid'],
                   'formats': ['<u8', '<i4', '<i4', '<u8', ('<u8', 624), '<f8', '<f8', '<f8', '<i4', '<f4', '?'],
                   'offsets': [0, 8, 12, 16, 24, 5016, 5024, 5032, 5040, 5048, 5052], 'itemsize': 5056})


default_generator = Generator()
default_generator.seed()        # as torch's: a fresh process draws from a non-deterministic seed until seeded


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
