"""Seeded random draws equal torch's, value for value (NOTE [torch's random streams] in
ember/_backends/cpu/_torch_random.py): the factories, the in-place samplers, nn.init and module
initialisation, dropout, bernoulli, multinomial, the samplers of utils.data; generator state round trips;
what stays ember's own."""
import numpy as np
import pytest
import torch

import ember

SEEDS = [0, 123, 2 ** 32 + 5, 2 ** 63 + 11]


def both(fn, seed):
    """fn(lib) under each library after manual_seed(seed), as NumPy arrays."""
    out = []
    for lib in (torch, ember):
        lib.manual_seed(seed)
        r = fn(lib)
        out.append([np.asarray(x) for x in r] if isinstance(r, (list, tuple)) else np.asarray(r))
    return out


def assert_same(fn, seed):
    theirs, ours = both(fn, seed)
    for t, o in zip(theirs if isinstance(theirs, list) else [theirs], ours if isinstance(ours, list) else [ours]):
        assert o.dtype == t.dtype and o.shape == t.shape
        np.testing.assert_array_equal(o, t)


CASES = {
    'rand': lambda L: L.rand(7, 9),
    'rand_float64': lambda L: L.rand(33, dtype=L.float64),
    'rand_float16': lambda L: L.rand(5, 7, dtype=L.float16),
    'rand_0d_and_empty': lambda L: [L.rand(()), L.rand(0, 3), L.rand(2)],
    'randn_small': lambda L: L.randn(5),                 # per-element pairs
    'randn_pairs_kept_across_calls': lambda L: [L.randn(3), L.randn(1), L.randn(4)],
    'randn_16': lambda L: L.randn(16),
    'randn_tail': lambda L: L.randn(1003),               # the last 16 recomputed
    'randn_big': lambda L: L.randn(257, 129),
    'randn_float64': lambda L: L.randn(50, dtype=L.float64),
    'randn_like': lambda L: L.randn_like(L.zeros(4, 6)),
    'rand_like': lambda L: L.rand_like(L.zeros(3, 3, dtype=L.float64)),
    'normal_': lambda L: L.empty(40, 5).normal_(2.0, 0.5),
    'uniform_': lambda L: L.empty(40, 5).uniform_(-0.3, 0.7),
    'normal_float_float': lambda L: L.normal(1.5, 2.0, size=(30,)),
    'normal_tensor_tensor': lambda L: L.normal(L.arange(20.), L.ones(20) * 2),
    'normal_tensor_float': lambda L: L.normal(L.arange(20.), 3.0),
    'normal_float_tensor': lambda L: L.normal(1.0, L.arange(1., 21.)),
    'randint': lambda L: L.randint(0, 10, (50,)),
    'randint_low_high': lambda L: L.randint(-7, 300, (4, 5)),
    'randint_64bit_range': lambda L: L.randint(-2 ** 40, 2 ** 40, (50,)),
    'randint_int32': lambda L: L.randint(0, 1000, (9,), dtype=L.int32),
    'randint_like': lambda L: L.randint_like(L.zeros(6), 3, 9),
    'random_int64': lambda L: L.empty(20, dtype=L.int64).random_(),
    'random_int32_range': lambda L: L.empty(20, dtype=L.int32).random_(0, 100),
    'random_to': lambda L: L.empty(20, dtype=L.int64).random_(17),
    'random_float': lambda L: L.empty(20).random_(),
    'random_bool': lambda L: L.empty(20, dtype=L.bool).random_(),
    'randperm': lambda L: L.randperm(1000),
    'randperm_small': lambda L: [L.randperm(0), L.randperm(1), L.randperm(2)],
    # non-contiguous tensors are filled in memory order, element by element
    'normal_transposed': lambda L: L.zeros(8, 4).t().normal_(),
    'uniform_sliced': lambda L: L.zeros(8, 8)[:, ::2].uniform_(),
    'normal_permuted': lambda L: L.zeros(2, 3, 4).permute(2, 0, 1).normal_(),
    'random_sliced': lambda L: L.zeros(8, 8, dtype=L.int64)[:, ::2].random_(0, 1000),
    # initialisation: what a seeded model starts from
    'linear': lambda L: [p.detach() for p in L.nn.Linear(30, 20).parameters()],
    'conv': lambda L: [p.detach() for p in L.nn.Conv2d(3, 8, 3).parameters()],
    'embedding': lambda L: L.nn.Embedding(100, 33).weight.detach(),
    'lstm': lambda L: [p.detach() for p in L.nn.LSTM(8, 16).parameters()],
    'init_normal': lambda L: L.nn.init.normal_(L.empty(30, 30), 0.0, 0.02),
    'init_xavier_uniform': lambda L: L.nn.init.xavier_uniform_(L.empty(30, 30)),
    'init_kaiming_normal': lambda L: L.nn.init.kaiming_normal_(L.empty(30, 30)),
    'init_trunc_normal': lambda L: L.nn.init.trunc_normal_(L.empty(30, 30), std=0.02),
    # dropout and the samplers built on uniforms
    'dropout': lambda L: L.nn.functional.dropout(L.arange(600.).reshape(20, 30) - 300, 0.1),
    'dropout_module_and_grad': lambda L: (lambda t: [L.nn.Dropout(0.3)(t).sum().backward(), t.grad][1])(
        L.ones(40, 7, requires_grad=True)),
    'dropout2d': lambda L: L.nn.functional.dropout2d(L.ones(4, 6, 3, 3), 0.5),
    'alpha_dropout': lambda L: L.nn.functional.alpha_dropout(L.arange(50.), 0.2, True),
    'bernoulli_probs': lambda L: L.bernoulli(L.linspace(0, 1, 40)),
    'bernoulli_probs_float64': lambda L: L.bernoulli(L.linspace(0, 1, 40, dtype=L.float64)),
    'bernoulli_p': lambda L: L.empty(30).bernoulli_(0.3),
    'bernoulli_tensor_p': lambda L: L.empty(5, 6).bernoulli_(L.full((6,), 0.4)),
    'exponential': lambda L: L.empty(40).exponential_(),
    'exponential_float64': lambda L: L.empty(3, 7, dtype=L.float64).exponential_(2.5),
    'geometric': lambda L: L.empty(300).geometric_(0.3),
    'cauchy': lambda L: L.empty(300).cauchy_(0.3, 0.7),
    'cauchy_float64': lambda L: L.empty(300, dtype=L.float64).cauchy_(0.3, 0.7),
    'log_normal': lambda L: L.empty(301).log_normal_(0.3, 0.7),
    'log_normal_float64': lambda L: L.empty(301, dtype=L.float64).log_normal_(0.3, 0.7),
    # float64 results of x * std + mean are fused multiply-adds in torch's compiled code
    'normal_float64_mean_std': lambda L: [L.empty(10, dtype=L.float64).normal_(0.5, 0.7),
                                          L.empty(1000, dtype=L.float64).normal_(0.5, 0.7)],
    'uniform_float64_range': lambda L: L.empty(1000, dtype=L.float64).uniform_(-0.3, 0.7),
    'multinomial_one': lambda L: L.multinomial(L.softmax(L.randn(4, 65), -1), 1),
    'multinomial_without_replacement': lambda L: L.multinomial(L.rand(3, 50), 7),
    'multinomial_with_replacement': lambda L: L.multinomial(L.rand(3, 50), 20, replacement=True),
    'weighted_sampler': lambda L: list(L.utils.data.WeightedRandomSampler([0.1, 0.5, 0.2, 0.2], 30)),
    'rrelu': lambda L: L.nn.functional.rrelu(L.randn(300), training=True),
    'rrelu_float64_bounds': lambda L: L.nn.functional.rrelu(L.randn(300, dtype=L.float64), 0.1, 0.4, training=True),
    'rrelu_module_grad': lambda L: (lambda t: [L.nn.RReLU()(t).sum().backward(), t.grad][1])(
        L.randn(40, requires_grad=True)),
    'gumbel_softmax_hard': lambda L: L.nn.functional.gumbel_softmax(L.randn(4, 7), hard=True),
    'init_sparse': lambda L: L.nn.init.sparse_(L.empty(10, 6), 0.5),
    'distributions': lambda L: [L.distributions.Normal(L.zeros(20), L.ones(20) * 2).rsample((3,)),
                                L.distributions.Categorical(logits=L.arange(10.)).sample((20,)),
                                L.distributions.Bernoulli(probs=L.full((20,), 0.3)).sample(),
                                L.distributions.Uniform(L.zeros(20), L.ones(20) * 3).sample(),
                                L.distributions.Exponential(L.ones(10)).sample()],
    # data order
    'random_sampler': lambda L: list(L.utils.data.RandomSampler(range(50))),
    'random_sampler_replacement': lambda L: list(L.utils.data.RandomSampler(range(50), replacement=True,
                                                                            num_samples=70)),
    'dataloader_shuffle': lambda L: [b.tolist() for b in L.utils.data.DataLoader(list(range(30)), batch_size=4,
                                                                               shuffle=True)],
    'random_split': lambda L: [s.indices for s in L.utils.data.random_split(range(20), [0.5, 0.5])],
}


@pytest.mark.parametrize('seed', SEEDS)
@pytest.mark.parametrize('case', sorted(CASES))
def test_seeded_draws_equal_torchs(case, seed):
    assert_same(CASES[case], seed)


def test_explicit_generators_and_their_state():
    for lib in (torch, ember):
        g = lib.Generator().manual_seed(7)
        a = lib.randn(5, generator=g)            # keeps the sixth normal of its last pair
        state = g.get_state()
        b = lib.randn(5, generator=g)
        g.set_state(state)
        np.testing.assert_array_equal(np.asarray(lib.randn(5, generator=g)), np.asarray(b))
        if lib is torch:
            ta, tb = a.numpy(), b.numpy()
    np.testing.assert_array_equal(a.numpy(), ta)
    np.testing.assert_array_equal(b.numpy(), tb)
    # the default generator's state round-trips too, and seeding forgets the kept normal
    ember.manual_seed(3)
    ember.randn(1)
    s = ember.get_rng_state()
    x = ember.randn(3)
    ember.set_rng_state(s)
    np.testing.assert_array_equal(ember.randn(3).numpy(), x.numpy())
    ember.manual_seed(3)
    torch.manual_seed(3)
    np.testing.assert_array_equal(ember.randn(3).numpy(), torch.randn(3).numpy())


def test_default_seed_is_torchs():
    # a new Generator starts from torch's default_rng_seed_val; the process's default generator, as torch's,
    # from a non-deterministic seed (two fresh processes draw different unseeded numbers)
    import subprocess
    import sys
    code = 'import ember; print(ember.initial_seed(), ember.rand(3).tolist())'
    runs = {subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout
            for _ in range(2)}
    assert len(runs) == 2
    g, tg = ember.Generator(), torch.Generator()
    assert g.initial_seed() == tg.initial_seed() == 67280421310721
    np.testing.assert_array_equal(ember.rand(6, generator=g).numpy(), torch.rand(6, generator=tg).numpy())


def test_rejection_samplers_repeat_under_a_seed():
    # poisson, gamma, binomial: torch's values too (tests/test_random_samplers.py); here, repeatable under a
    # seed and with the right mean
    for fn in (lambda: ember.poisson(ember.full((50,), 3.0)), lambda: ember._standard_gamma(ember.full((50,), 2.0)),
               lambda: ember.binomial(ember.full((50,), 10.0), ember.full((50,), 0.3))):
        ember.manual_seed(5)
        a = fn()
        ember.manual_seed(5)
        assert ember.equal(a, fn())
    ember.manual_seed(5)
    assert abs(ember.poisson(ember.full((100000,), 3.0)).mean().item() - 3.0) < 0.03


def _seeded_training(lib):
    """A seeded program end to end: data, initialisation, shuffling, dropout, Adam."""
    lib.manual_seed(0)
    x = lib.randn(256, 20)
    y = (x[:, 0] + x[:, 1] > 0).long()
    loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(x, y), batch_size=32, shuffle=True)
    model = lib.nn.Sequential(lib.nn.Linear(20, 64), lib.nn.ReLU(), lib.nn.Dropout(0.2), lib.nn.Linear(64, 2))
    opt = lib.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(2):
        for xb, yb in loader:
            loss = lib.nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    return losses


def test_a_seeded_training_run_follows_torchs():
    # the same draws everywhere, so the losses differ only by the rounding of the arithmetic
    np.testing.assert_allclose(_seeded_training(ember), _seeded_training(torch), rtol=1e-4, atol=1e-5)


def test_generator_state_is_torchs_bytes():
    # torch's 5056-byte CPUGeneratorImplState: a state saved by one library restores the other
    for seed, draw in ((5, lambda L: L.randn(3)), (9, lambda L: L.rand(624)), (1, lambda L: None)):
        torch.manual_seed(seed)
        ember.manual_seed(seed)
        draw(torch), draw(ember)
        ts, es = torch.get_rng_state(), ember.get_rng_state()
        np.testing.assert_array_equal(es.numpy(), ts.numpy())
        ember.set_rng_state(ember.tensor(ts.numpy()))
        np.testing.assert_array_equal(ember.randn(5).numpy(), torch.randn(5).numpy())
        torch.set_rng_state(torch.from_numpy(ember.get_rng_state().numpy()))
        np.testing.assert_array_equal(ember.randn(50).numpy(), torch.randn(50).numpy())
    np.testing.assert_array_equal(ember.Generator().get_state().numpy(), torch.Generator().get_state().numpy())
    with pytest.raises(RuntimeError, match='CPUGeneratorImplState of size 5056 but found the input RNG state size to be 10'):
        ember.set_rng_state(ember.zeros(10, dtype=ember.uint8))
    with pytest.raises(TypeError, match='RNG state must be a torch.ByteTensor'):
        ember.set_rng_state(ember.zeros(10))


def test_state_of_a_seed_past_2_63_as_torch():
    """torch's state keeps the seed as uint64: ember.seed() may pick any 64-bit seed, and get_state must hold it
    (checkpointing calls get_rng_state; an int64 field overflowed)."""
    for s in (2 ** 63, 2 ** 64 - 5):
        g, t = ember.Generator().manual_seed(s), torch.Generator().manual_seed(s)
        assert bytes(g.get_state().numpy()) == bytes(t.get_state().numpy())
        assert ember.Generator().set_state(ember.tensor(t.get_state().numpy())).initial_seed() == s


@pytest.mark.parametrize('dtype', ['int32', 'int64', 'float64'])
def test_randint_draws_64_bits_from_a_range_of_2_to_the_28(dtype):
    # torch draws one 64-bit output per element once the range reaches 2**28 (less modulo bias), 32 bits below
    out = []
    for L in (ember, torch):
        res = []
        for hi in (2 ** 16, 2 ** 28 - 1, 2 ** 28, 2 ** 28 + 5, 2 ** 30, 2 ** 31 - 1, 2 ** 32, 2 ** 40):
            for lo in (0, -7):
                if dtype == 'int32' and hi > 2 ** 31 - 1:
                    continue
                L.manual_seed(5)
                res.append(L.randint(lo, hi, (5,), dtype=getattr(L, dtype)).tolist())
                L.manual_seed(5)
                res.append(L.empty(5, dtype=getattr(L, dtype)).random_(lo, hi).tolist())
        L.manual_seed(3)
        res += [L.empty(4, dtype=L.int64).random_(2 ** 29).tolist(), L.randint(2 ** 30, (2, 3)).tolist()]
        out.append(res)
    assert out[0] == out[1] and len(out[0]) >= 14
