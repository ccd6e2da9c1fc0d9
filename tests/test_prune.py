"""ember.nn.utils.prune against torch.nn.utils.prune: on modules built from the same seed, every pruning method
gives the same masks (the random ones too: ember draws from torch's RNG streams), the same module layout
(weight_orig parameter, weight_mask buffer, pre-hook), state_dict keys, forward outputs, and the same errors."""
import numpy as np
import pytest
import torch
import torch.nn.utils.prune  # noqa: F401  torch does not import it with torch.nn.utils

import ember
from ember.nn.utils import prune as eprune

tprune = torch.nn.utils.prune


def net(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Conv2d(2, 6, 3), lib.nn.ReLU(), lib.nn.Flatten(), lib.nn.Linear(6 * 9, 5))


def a(t):
    return t.detach().numpy()


def both(fn):
    """``fn(lib, prune)`` for torch and for ember; returns (torch's result, ember's)."""
    return fn(torch, tprune), fn(ember, eprune)


def same(x, y, atol=1e-6):
    assert np.allclose(a(x), a(y), atol=atol), (a(x), a(y))


def layout(m):
    return (sorted(n for n, _ in m.named_parameters()), sorted(n for n, _ in m.named_buffers()),
            list(m.state_dict()), [type(h).__name__ for h in m._forward_pre_hooks.values()])


CASES = {
    'l1 int': lambda P, m: P.l1_unstructured(m[0], 'weight', amount=20),
    'l1 frac': lambda P, m: P.l1_unstructured(m[3], 'weight', amount=0.37),
    'l1 bias': lambda P, m: P.l1_unstructured(m[0], 'bias', amount=2),
    'l1 zero': lambda P, m: P.l1_unstructured(m[0], 'weight', amount=0),
    'random unstructured': lambda P, m: P.random_unstructured(m[0], 'weight', amount=0.3),
    'ln dim0': lambda P, m: P.ln_structured(m[0], 'weight', amount=0.5, n=2, dim=0),
    'ln dim1 L1': lambda P, m: P.ln_structured(m[0], 'weight', amount=1, n=1, dim=1),
    'ln -inf dim -1': lambda P, m: P.ln_structured(m[3], 'weight', amount=10, n=float('-inf'), dim=-1),
    'ln inf dim -1': lambda P, m: P.ln_structured(m[3], 'weight', amount=0.25, n=float('inf'), dim=-1),
    'random structured': lambda P, m: P.random_structured(m[3], 'weight', amount=0.4, dim=1),
    'random structured dim0': lambda P, m: P.random_structured(m[0], 'weight', amount=2, dim=0),
    'identity': lambda P, m: P.identity(m[0], 'weight'),
}


@pytest.mark.parametrize('case', list(CASES))
def test_single_pruning_matches_torch(case):
    def run(lib, P):
        m = net(lib)
        returned = CASES[case](P, m)
        x = lib.ones(1, 2, 5, 5) * 0.5
        return m, returned, m(x)
    (tm, tret, tout), (em, eret, eout) = both(run)
    assert eret is em[0] or eret is em[3]                 # the functions return the module
    pruned = 0 if tret is tm[0] else 3
    assert layout(em[pruned]) == layout(tm[pruned])
    name = 'bias' if 'bias' in case else 'weight'
    same(getattr(tm[pruned], name + '_mask'), getattr(em[pruned], name + '_mask'), atol=0)
    same(getattr(tm[pruned], name), getattr(em[pruned], name))
    same(tout, eout, atol=1e-5)
    assert isinstance(getattr(em[pruned], name + '_orig'), ember.nn.Parameter)
    assert not isinstance(getattr(em[pruned], name), ember.nn.Parameter)
    assert eprune.is_pruned(em) and eprune.is_pruned(em[pruned]) and not eprune.is_pruned(em[1])


def test_masked_weight_follows_orig_through_the_pre_hook():
    m = eprune.l1_unstructured(ember.nn.Linear(4, 3), 'weight', amount=5)
    with ember.no_grad():
        m.weight_orig.mul_(2)
    m(ember.ones(1, 4))                                     # the hook recomputes weight = orig * mask
    assert np.array_equal(a(m.weight), a(m.weight_orig) * a(m.weight_mask))
    assert int((m.weight == 0).sum()) >= 5


def test_gradient_flows_to_orig_only_where_kept():
    def run(lib, P):
        lib.manual_seed(1)
        m = P.l1_unstructured(lib.nn.Linear(5, 4), 'weight', amount=0.5)
        m(lib.randn(3, 5)).pow(2).sum().backward()
        return m
    t, e = both(run)
    same(t.weight_orig.grad, e.weight_orig.grad, atol=1e-5)
    assert np.all(a(e.weight_orig.grad)[a(e.weight_mask) == 0] == 0)


def test_iterative_pruning_combines_masks_like_torch():
    def run(lib, P):
        m = net(lib)
        conv = m[0]
        P.random_unstructured(conv, 'weight', amount=0.3)
        first = conv.weight_mask.clone()
        P.ln_structured(conv, 'weight', amount=0.5, n=2, dim=0)
        P.l1_unstructured(conv, 'weight', amount=10)
        P.random_structured(conv, 'weight', amount=1, dim=1)
        hook = list(conv._forward_pre_hooks.values())[-1]
        return m, first, hook, m(lib.ones(1, 2, 5, 5))
    (tm, tfirst, thook, tout), (em, efirst, ehook, eout) = both(run)
    assert isinstance(ehook, eprune.PruningContainer) and len(ehook) == len(thook) == 4
    assert [type(h).__name__ for h in ehook] == [type(h).__name__ for h in thook]
    assert ehook[0]._tensor_name == 'weight'
    same(tm[0].weight_mask, em[0].weight_mask, atol=0)
    assert np.all(a(em[0].weight_mask) <= a(efirst))        # a later mask only removes more
    same(tout, eout, atol=1e-5)
    assert layout(em[0]) == layout(tm[0])


def test_global_unstructured_matches_torch():
    def run(lib, P):
        m = net(lib)
        P.l1_unstructured(m[0], 'weight', amount=5)         # an existing mask is respected
        params = [(m[0], 'weight'), (m[0], 'bias'), (m[3], 'weight')]
        P.global_unstructured(params, pruning_method=P.L1Unstructured, amount=0.4)
        return m, m(lib.ones(1, 2, 5, 5))
    (tm, tout), (em, eout) = both(run)
    for i, name in ((0, 'weight'), (0, 'bias'), (3, 'weight')):
        same(getattr(tm[i], name + '_mask'), getattr(em[i], name + '_mask'), atol=0)
    assert [type(h).__name__ for h in em[0]._forward_pre_hooks.values()] == \
        [type(h).__name__ for h in tm[0]._forward_pre_hooks.values()]
    same(tout, eout, atol=1e-5)
    assert list(em.state_dict()) == list(tm.state_dict())


def test_global_unstructured_random_and_importance_scores_match_torch():
    def run(lib, P):
        m = net(lib)
        scores = {(m[3], 'weight'): lib.arange(m[3].weight.numel(), dtype=lib.float32).view_as(m[3].weight)}
        P.global_unstructured(((m[0], 'weight'), (m[3], 'weight')), pruning_method=P.L1Unstructured,
                              importance_scores=scores, amount=30)
        lib.manual_seed(7)
        P.global_unstructured([(m[0], 'bias'), (m[3], 'bias')], pruning_method=P.RandomUnstructured, amount=4)
        return m
    tm, em = both(run)
    for i, name in ((0, 'weight'), (3, 'weight'), (0, 'bias'), (3, 'bias')):
        same(getattr(tm[i], name + '_mask'), getattr(em[i], name + '_mask'), atol=0)


def test_importance_scores_and_custom_mask_match_torch():
    def run(lib, P):
        m = net(lib)
        w = m[3].weight
        P.l1_unstructured(m[3], 'weight', amount=7, importance_scores=-lib.arange(w.numel()).view_as(w).float())
        P.ln_structured(m[0], 'weight', amount=2, n=2, dim=0, importance_scores=lib.ones(6, 2, 3, 3).cumsum(0))
        mask = (lib.arange(6) % 2).float()
        P.custom_from_mask(m[0], 'bias', mask=mask)
        return m
    tm, em = both(run)
    for i, name in ((3, 'weight'), (0, 'weight'), (0, 'bias')):
        same(getattr(tm[i], name + '_mask'), getattr(em[i], name + '_mask'), atol=0)
    assert a(em[0].bias_mask).tolist() == [0, 1, 0, 1, 0, 1]


def test_remove_makes_pruning_permanent_like_torch():
    def run(lib, P):
        m = net(lib)
        P.l1_unstructured(m[0], 'weight', amount=0.5)
        P.ln_structured(m[0], 'weight', amount=1, n=2, dim=0)
        orig = m[0].weight_orig
        P.remove(m[0], 'weight')
        return m, orig
    (tm, torig), (em, eorig) = both(run)
    assert layout(em[0]) == layout(tm[0]) and list(em.state_dict()) == list(tm.state_dict())
    assert em[0].weight is eorig and isinstance(em[0].weight, ember.nn.Parameter)   # the same Parameter object
    same(tm[0].weight, em[0].weight)
    assert not eprune.is_pruned(em) and not em[0]._forward_pre_hooks
    with pytest.raises(ValueError, match="Parameter 'weight' of module .* has to be pruned before pruning can be "
                                         "removed"):
        eprune.remove(em[0], 'weight')


def test_state_dict_round_trip():
    m = eprune.l1_unstructured(ember.nn.Linear(4, 3), 'weight', amount=0.5)
    sd = m.state_dict()
    assert list(sd) == ['bias', 'weight_orig', 'weight_mask']
    fresh = eprune.identity(ember.nn.Linear(4, 3), 'weight')
    fresh.load_state_dict(sd)
    x = ember.randn(2, 4)
    assert np.allclose(a(fresh(x)), a(m(x)))
    tm = tprune.l1_unstructured(torch.nn.Linear(4, 3), 'weight', amount=0.5)
    assert list(tm.state_dict()) == list(sd)


def test_prune_method_on_a_plain_tensor():
    def run(lib, P):
        lib.manual_seed(3)
        t = lib.randn(4, 5)
        return (P.L1Unstructured(amount=6).prune(t), P.LnStructured(amount=2, n=1, dim=1).prune(t),
                P.RandomUnstructured(amount=0.5).prune(t), P.RandomStructured(amount=0.5, dim=0).prune(t),
                P.L1Unstructured(amount=3).prune(t, importance_scores=lib.arange(20.).view(4, 5)),
                P.Identity().prune(t))
    for x, y in zip(*both(run), strict=True):
        same(x, y)


def test_pruning_container_construction():
    a_, b_ = eprune.L1Unstructured(1), eprune.RandomUnstructured(1)
    a_._tensor_name = b_._tensor_name = 'weight'
    c = eprune.PruningContainer(a_)
    c.add_pruning_method(b_)
    assert list(c) == [a_, b_] and c[1] is b_ and c._tensor_name == 'weight'
    other = eprune.L1Unstructured(1)
    other._tensor_name = 'bias'
    with pytest.raises(ValueError, match="Can only add pruning methods acting on the parameter named 'weight'"):
        c.add_pruning_method(other)
    with pytest.raises(TypeError, match='is not a BasePruningMethod subclass'):
        c.add_pruning_method(3)


def _error(lib, P, call):
    try:
        call(lib, P)
    except Exception as e:        # noqa: BLE001  the class and message are what is compared
        # messages name the library's own classes (torch.Size, <class 'torch.nn...'>): compared with that replaced
        return type(e), str(e).split(' of module ')[0].split(' to PruningContainer ')[0].replace('torch', 'ember')
    return None


ERRORS = {
    'amount str': lambda lib, P: P.l1_unstructured(net(lib)[0], 'weight', amount='0.5'),
    'amount > 1.0': lambda lib, P: P.l1_unstructured(net(lib)[0], 'weight', amount=1.5),
    'amount negative': lambda lib, P: P.random_unstructured(net(lib)[0], 'weight', amount=-1),
    'amount negative float': lambda lib, P: P.random_unstructured(net(lib)[0], 'weight', amount=-0.1),
    'amount too large': lambda lib, P: P.l1_unstructured(net(lib)[0], 'bias', amount=7),
    'structured on 1-d': lambda lib, P: P.ln_structured(net(lib)[0], 'bias', amount=1, n=2, dim=0),
    'structured dim': lambda lib, P: P.random_structured(net(lib)[0], 'weight', amount=1, dim=4),
    'structured too many': lambda lib, P: P.ln_structured(net(lib)[0], 'weight', amount=7, n=2, dim=0),
    'scores shape': lambda lib, P: P.l1_unstructured(net(lib)[0], 'weight', amount=1, importance_scores=lib.ones(3)),
    'custom mask shape': lambda lib, P: P.custom_from_mask(net(lib)[0], 'bias', mask=lib.ones(5)),
    'no such param': lambda lib, P: P.l1_unstructured(net(lib)[0], 'nope', amount=1),
    'remove unpruned': lambda lib, P: P.remove(net(lib)[0], 'weight'),
    'global not iterable': lambda lib, P: P.global_unstructured(3, P.L1Unstructured, amount=1),
    'global scores not dict': lambda lib, P: P.global_unstructured([(net(lib)[0], 'weight')], P.L1Unstructured,
                                                                   importance_scores=[1], amount=1),
    'global structured': lambda lib, P: P.global_unstructured([(net(lib)[0], 'weight')], P.LnStructured,
                                                              amount=1, n=2, dim=0),
}


@pytest.mark.parametrize('case', list(ERRORS))
def test_errors_match_torch(case):
    theirs, ours = (_error(lib, P, ERRORS[case]) for lib, P in ((torch, tprune), (ember, eprune)))
    assert theirs is not None and ours is not None
    assert ours[0] is theirs[0] or ours[0].__name__ == theirs[0].__name__, (ours, theirs)
    if case not in ('no such param',):     # attribute-error wording is the Module's, not prune's
        assert ours[1] == theirs[1]


def test_a_failed_first_pruning_leaves_the_module_as_it_was():
    m = ember.nn.Conv2d(2, 6, 3)
    with pytest.raises(ValueError):
        eprune.ln_structured(m, 'bias', amount=1, n=2, dim=0)
    assert sorted(n for n, _ in m.named_parameters()) == ['bias', 'weight'] and not list(m.named_buffers())
    assert not eprune.is_pruned(m)


def test_public_names_are_torchs():
    assert set(eprune.__all__) <= set(dir(tprune))
    assert {'BasePruningMethod', 'PruningContainer', 'Identity', 'RandomUnstructured', 'L1Unstructured',
            'RandomStructured', 'LnStructured', 'CustomFromMask', 'identity', 'random_unstructured',
            'l1_unstructured', 'random_structured', 'ln_structured', 'global_unstructured', 'custom_from_mask',
            'remove', 'is_pruned'} <= set(eprune.__all__)
    assert ember.nn.utils.prune is eprune
    for cls in (eprune.Identity, eprune.RandomUnstructured, eprune.L1Unstructured, eprune.RandomStructured,
                eprune.LnStructured, eprune.CustomFromMask):
        assert cls.PRUNING_TYPE == getattr(tprune, cls.__name__).PRUNING_TYPE


def test_a_custom_pruning_method():
    class EveryOther(eprune.BasePruningMethod):
        PRUNING_TYPE = 'unstructured'

        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.view(-1)[::2] = 0
            return mask

    m = ember.nn.Linear(3, 2)
    EveryOther.apply(m, 'bias')
    assert a(m.bias_mask).tolist() == [0, 1]
    EveryOther.apply(m, 'bias')                 # on top: only the kept entry is left to prune
    assert a(m.bias_mask).tolist() == [0, 0]
    with pytest.raises(TypeError):
        eprune.BasePruningMethod()
