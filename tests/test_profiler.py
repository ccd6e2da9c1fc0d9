"""ember.profiler against torch.profiler: which events a profile holds and how they nest, the table's layout, the
Chrome trace, record_function, schedules, memory columns, and that nothing is recorded (or wrapped) when off.

Where ember and torch decompose an operator differently the event trees differ legitimately; each comparison
below says what it compares and why the rest differs."""
import json
import os
import re
import threading

import numpy as np
import pytest
import torch

import ember
from ember._core import allocator as _allocator
from ember._dispatch import dispatcher
from ember.profiler import profile, record_function, schedule, ProfilerActivity, ProfilerAction


def _tree(events):
    """[(depth, name)] of the events, parents before children, in order of start."""
    out = []

    def walk(e, d):
        out.append((d, e.name))
        for c in sorted(e.cpu_children, key=lambda c: c.time_range.start):
            walk(c, d + 1)
    for e in events:
        if e.cpu_parent is None:
            walk(e, 0)
    return out


def _counts(names):
    out = {}
    for n in names:
        out[n] = out.get(n, 0) + 1
    return out


def _model(L):
    L.manual_seed(0)
    return L.nn.Sequential(L.nn.Linear(8, 16), L.nn.ReLU(), L.nn.Linear(16, 4))


def _data(L):
    rng = np.random.default_rng(0)
    return L.tensor(rng.standard_normal((5, 8), dtype=np.float32)), L.tensor(rng.standard_normal((5, 4), dtype=np.float32))


def _train_step(L, model, opt, x, y):
    opt.zero_grad()
    loss = L.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()


# --- what a profile holds -----------------------------------------------------------------

def test_training_step_lists_the_expected_operators():
    model = _model(ember)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    x, y = _data(ember)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        _train_step(ember, model, opt, x, y)
    counts = {e.key: e.count for e in prof.key_averages()}
    expected = {
        'aten::linear': 2, 'aten::relu': 1,                                   # the model
        'aten::mse_loss': 1, 'aten::mse_loss_backward': 1,                     # torch's loss operator and its backward
        'autograd::engine::evaluate_function: AddmmBackward0': 2, 'AddmmBackward0': 2,   # torch's name
        'aten::linear_backward': 2,
        'autograd::engine::evaluate_function: ReluBackward0': 1, 'ReluBackward0': 1, 'aten::threshold_backward': 1,
        'autograd::engine::evaluate_function: torch::autograd::AccumulateGrad': 4,
        'torch::autograd::AccumulateGrad': 4,
        'Optimizer.zero_grad#SGD.zero_grad': 1, 'Optimizer.step#SGD.step': 1,
        'aten::add_': 4,                                                      # SGD: one per parameter
    }
    assert {k: counts.get(k) for k in expected} == expected
    step = next(e for e in prof.events() if e.name == 'Optimizer.step#SGD.step')
    assert [c.name for c in step.cpu_children] == ['aten::add_'] * 4
    assert all(e.name.startswith(('aten::', 'autograd::', 'torch::autograd::', 'Optimizer.', '[memory]'))
               or e.name.endswith('Backward0') for e in prof.events())


def test_forward_operators_equal_torchs_where_both_decompose_alike():
    """The model's forward: torch and ember both call aten::linear, aten::relu, aten::linear at top level. Below
    that they differ by design: torch's linear is CompositeImplicitAutograd (t, transpose, as_strided, addmm,
    expand, copy_, resolve_conj), ember's a primitive with a fused kernel (primitive_because in _ops/products.py),
    and torch's relu calls clamp_min. A pointwise chain decomposes alike in both, so there the whole tree is equal."""
    def forward_tree(L, fn):
        with L.profiler.profile(activities=[L.profiler.ProfilerActivity.CPU]) as prof:
            fn()
        return prof.events()

    model_e, model_t = _model(ember), _model(torch)
    xe, _ = _data(ember)
    xt, _ = _data(torch)
    top = lambda evs: _counts(e.name for e in evs if e.cpu_parent is None)       # noqa: E731
    ours, theirs = top(forward_tree(ember, lambda: model_e(xe))), top(forward_tree(torch, lambda: model_t(xt)))
    assert ours == theirs == {'aten::linear': 2, 'aten::relu': 1}

    a_e, a_t = ember.ones(4), torch.ones(4)
    ours = _tree(forward_tree(ember, lambda: (a_e * a_e + a_e).exp().neg()))
    theirs = _tree(forward_tree(torch, lambda: (a_t * a_t + a_t).exp().neg()))
    assert ours == theirs == [(0, 'aten::mul'), (0, 'aten::add'), (0, 'aten::exp'), (0, 'aten::neg')]


def test_autograd_nodes_appear_as_torchs_rows():
    """Both engines run the same nodes in the same order, each as evaluate_function around the node's own range
    with the formula's operators inside. torch's extra rows: aten::ones_like for the implicit gradient of the
    root (ember makes it without an operator call) and aten::detach under AccumulateGrad (ember's accumulation
    assigns the tensor)."""
    def run(L):
        x, y = L.ones(3, requires_grad=True), L.ones(3, requires_grad=True)
        with L.profiler.profile() as prof:
            (x * y).sum().backward()
        return prof.events()
    ours, theirs = run(ember), run(torch)
    ev = lambda evs: [e.name for e in evs if e.name.startswith('autograd::engine')]     # noqa: E731
    assert ev(ours) == ev(theirs) == [
        'autograd::engine::evaluate_function: SumBackward0', 'autograd::engine::evaluate_function: MulBackward0',
        'autograd::engine::evaluate_function: torch::autograd::AccumulateGrad',
        'autograd::engine::evaluate_function: torch::autograd::AccumulateGrad']
    node = lambda evs: next(e for e in evs if e.name == 'MulBackward0')                 # noqa: E731
    for evs in (ours, theirs):
        assert node(evs).cpu_parent.name == 'autograd::engine::evaluate_function: MulBackward0'
        assert [c.name for c in node(evs).cpu_children] == ['aten::mul', 'aten::mul']


def test_an_operator_called_inside_a_kernel_is_a_child():
    with ember.library.Library('profdemo', 'DEF') as lib:
        lib.define('axpy(Tensor a, Tensor x, Tensor y) -> Tensor')
        lib.impl('axpy', lambda a, x, y: a * x + y, 'CompositeImplicitAutograd')
        t = ember.ones(3)
        with profile() as prof:
            ember.ops.profdemo.axpy(t, t, t)
    assert _tree(prof.events()) == [(0, 'profdemo::axpy'), (1, 'aten::mul'), (1, 'aten::add')]
    # an Autograd kernel redispatching below itself is still one event
    x = ember.ones(3, requires_grad=True)
    with profile() as prof:
        x * 2
    assert [e.name for e in prof.events()] == ['aten::mul']


def test_events_of_other_threads_carry_their_thread_id():
    x = ember.ones(2)
    with profile() as prof:
        x.neg()
        th = threading.Thread(target=lambda: x.exp())
        th.start()
        th.join()
    by_name = {e.name: e for e in prof.events()}
    assert by_name['aten::exp'].thread != by_name['aten::neg'].thread
    assert by_name['aten::exp'].cpu_parent is None        # stacks are per thread


# --- the table ----------------------------------------------------------------------------------

def _layout(table):
    """The table with every number replaced, so that two profiles' layouts compare."""
    return re.sub(r' +', ' ', re.sub(r'-?\d+(\.\d+)?( ?(%|us|ms|s|B|KB|MB|GB)\b|%)', '#', table))


def test_table_layout_equals_torchs():
    def tables(L, **kw):
        x = L.ones(2)
        with L.profiler.profile(**kw) as prof:
            with L.profiler.record_function('ab'):
                x.neg()
        return (prof.key_averages().table(sort_by='self_cpu_time_total'),
                prof.key_averages(group_by_input_shape=True).table(sort_by='cpu_time_total', row_limit=1))
    for kw in ({}, {'record_shapes': True, 'profile_memory': True}):
        ours, theirs = tables(ember, **kw), tables(torch, **kw)
        for o, t in zip(ours, theirs):
            lo, lt = o.splitlines(), t.splitlines()
            assert lo[:3] == lt[:3] and lo[-2] == lt[-2]          # dashes, headers, dashes
            assert [len(line) for line in lo[:-1]] == [len(line) for line in lt[:-1]]
            assert sorted(_layout(o).splitlines()) == sorted(_layout(t).splitlines())
            assert re.fullmatch(r'Self CPU time total: \d+\.\d{3}(us|ms|s)', lo[-1]) and o.endswith('\n')
    assert 'Input Shapes' in ours[1] and 'CPU Mem' in ours[0] and 'Self CPU Mem' in ours[0]


def test_table_sorts_limits_and_truncates():
    x = ember.ones(2)
    long_name = 'a' * 70
    with profile() as prof:
        with record_function(long_name):
            for _ in range(3):
                x.neg()
        x.exp()
    t = prof.key_averages().table(sort_by='count', row_limit=2).splitlines()
    assert len(t) == 2 + 3 + 2                               # two rows
    assert t[3].split()[0] == 'aten::neg' and t[3].split()[-1] == '3'
    assert t[4].startswith('a' * 52 + '...')                 # a name column is at most 55 wide
    with pytest.raises(ValueError, match='sort_by'):
        prof.key_averages().table(sort_by='no_such_column')
    with profile() as empty:
        pass
    assert empty.key_averages().table() == '' and len(empty.events()) == 0


def test_self_time_excludes_children():
    with profile() as prof:
        with record_function('outer'):
            ember.ones(100, 100).exp().sum()
    outer = next(e for e in prof.events() if e.name == 'outer')
    kids = sum(c.cpu_time_total for c in outer.cpu_children)
    assert len(outer.cpu_children) == 3 and kids > 0
    assert outer.self_cpu_time_total == pytest.approx(outer.cpu_time_total - kids)
    assert prof.key_averages().self_cpu_time_total == pytest.approx(outer.cpu_time_total)


# --- chrome trace ---------------------------------------------------------------------------------

def test_chrome_trace_is_valid_json_with_nested_events(tmp_path):
    model = _model(ember)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    x, y = _data(ember)
    with profile(record_shapes=True, profile_memory=True) as prof:
        with record_function('train step'):
            _train_step(ember, model, opt, x, y)
    path = str(tmp_path / 'trace.json')
    prof.export_chrome_trace(path)
    doc = json.load(open(path))
    events = doc['traceEvents']
    complete = [e for e in events if e['ph'] == 'X']
    assert len(complete) == len([e for e in prof.events() if e.name != '[memory]']) > 20
    for e in events:
        assert {'ph', 'name', 'pid', 'tid'} <= set(e) and (e['ph'] == 'M' or isinstance(e['ts'], float))
    for e in complete:
        assert e['dur'] >= 0 and e['cat'] in ('cpu_op', 'user_annotation')
    ns = lambda v: round(v * 1000)        # noqa: E731  microseconds with three decimals: exact nanoseconds
    step = next(e for e in complete if e['name'] == 'train step')
    inside = [e for e in complete if e is not step and ns(step['ts']) <= ns(e['ts'])
              and ns(e['ts']) + ns(e['dur']) <= ns(step['ts']) + ns(step['dur'])]
    assert len(inside) == len(complete) - 1              # every other range nests inside the block
    by_id = {e['args']['External id']: e for e in complete}
    pairs = 0
    for ev in prof.events():
        if ev.cpu_parent is not None and ev.name != '[memory]':
            c, p = by_id[ev.id], by_id[ev.cpu_parent.id]
            assert ns(p['ts']) <= ns(c['ts']) and ns(c['ts']) + ns(c['dur']) <= ns(p['ts']) + ns(p['dur'])
            pairs += 1
    assert pairs > 20
    linear = next(e for e in complete if e['name'] == 'aten::linear')
    assert linear['args']['Input Dims'] == [[5, 8], [16, 8], [16]] and linear['args']['Input type'] == ['float'] * 3
    mem = [e for e in events if e['ph'] == 'i']
    assert mem and all(e['name'] == '[memory]' and e['s'] == 't' and 'Bytes' in e['args'] for e in mem)
    assert any(e['ph'] == 'M' and e['name'] == 'thread_name' for e in events)


def test_tensorboard_trace_handler_writes_a_trace_file(tmp_path):
    x = ember.ones(2)
    with profile(on_trace_ready=ember.profiler.tensorboard_trace_handler(str(tmp_path), worker_name='w0')):
        x + x
    files = os.listdir(tmp_path)
    assert len(files) == 1 and re.fullmatch(r'w0\.\d+\.pt\.trace\.json', files[0])
    names = [e['name'] for e in json.load(open(tmp_path / files[0]))['traceEvents'] if e['ph'] == 'X']
    assert names == ['aten::add']


# --- record_function -----------------------------------------------------------------------------

def test_record_function_as_context_manager_and_decorator():
    @record_function('fib')
    def fib(n):
        return ember.ones(1) if n < 2 else fib(n - 1) + fib(n - 2)

    with profile() as prof:
        with record_function('outer') as rf:
            fib(2)
    assert rf.name == 'outer'
    assert _tree(prof.events()) == [(0, 'outer'), (1, 'fib'), (2, 'fib'), (3, 'aten::ones'), (2, 'fib'),
                                    (3, 'aten::ones'), (2, 'aten::add')]
    assert all(e.is_user_annotation == (e.name in ('outer', 'fib')) for e in prof.events())
    with record_function('nobody listens'):          # no profiler: nothing to record, nothing fails
        fib(1)


# --- schedule ------------------------------------------------------------------------------------

def test_schedule_actions_equal_torchs():
    for kw in ({'wait': 1, 'warmup': 1, 'active': 2, 'repeat': 2, 'skip_first': 1},
               {'wait': 2, 'warmup': 1, 'active': 1, 'skip_first': 2, 'skip_first_wait': 1},
               {'wait': 0, 'warmup': 2, 'active': 3}):
        ours, theirs = schedule(**kw), torch.profiler.schedule(**kw)
        assert [ours(i).name for i in range(20)] == [theirs(i).name for i in range(20)], kw


@pytest.mark.filterwarnings('ignore:Warning. Profiler clears events')
def test_schedule_records_active_steps_and_calls_on_trace_ready_per_cycle():
    def run(L):
        seen = []

        def ready(p):
            evs = p.events()
            seen.append((p.step_num, sum(e.name == 'aten::neg' for e in evs)))
        x = L.ones(2)
        sched = L.profiler.schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
        with L.profiler.profile(schedule=sched, on_trace_ready=ready) as p:
            for _ in range(12):
                x.neg()
                p.step()
        return seen, p
    theirs, _ = run(torch)
    ours, prof = run(ember)
    assert ours == theirs == [(5, 2), (9, 2)]
    steps = [e for e in prof.events() if e.name == 'ProfilerStep*']
    assert [e.trace_name for e in steps] == ['ProfilerStep#7', 'ProfilerStep#8']
    assert all([c.name for c in e.cpu_children] == ['aten::neg'] for e in steps)


def test_without_schedule_on_trace_ready_runs_once_at_stop():
    calls = []
    with profile(on_trace_ready=lambda p: calls.append(p.step_num)) as p:
        ember.ones(2).neg()
        p.step()
        ember.ones(2).neg()
    assert calls == [1]
    assert not any(e.name.startswith('ProfilerStep') for e in p.events())     # steps are ranges only with a schedule
    assert sum(e.name == 'aten::neg' for e in p.events()) == 2


def test_warmup_fills_caches_but_records_nothing():
    x = ember.ones(2)
    with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=1)) as p:
        x.neg()
        assert dispatcher.OBSERVERS                            # listening during warm-up...
        p.step()
        x.exp()
        p.step()
        x.abs()
    names = [e.name for e in p.events()]
    assert names == ['ProfilerStep*', 'aten::exp']             # ...but keeping only the active step
    assert not dispatcher.OBSERVERS


# --- memory --------------------------------------------------------------------------------------

def test_memory_per_operator_equals_torchs():
    def run(L):
        with L.profiler.profile(profile_memory=True, record_shapes=True) as p:
            y = L.ones(1000, 1000)
            z = L.cat([y, y])
            del z
        return {e.key: (e.cpu_memory_usage, e.self_cpu_memory_usage) for e in p.key_averages()}, p
    ours, prof = run(ember)
    theirs, _ = run(torch)
    for key in ('aten::ones', 'aten::cat', '[memory]'):       # torch's ones allocates in a child (aten::empty)
        assert ours[key][0] == theirs[key][0], key
    assert ours['aten::cat'] == (8_000_000, 8_000_000) and ours['[memory]'] == (-8_000_000, -8_000_000)
    table = prof.key_averages().table()
    assert re.search(r'aten::cat( +\S+){5} +7\.63 MB +7\.63 MB +1', table)
    assert re.search(r'\[memory\]( +\S+){5} +-7\.63 MB +-7\.63 MB', table)


def test_views_and_in_place_results_allocate_nothing():
    x = ember.ones(100)
    with profile(profile_memory=True) as p:
        x.view(10, 10)
        x.add_(1)
        x[2:5]
    assert {e.name: e.cpu_memory_usage for e in p.events()} == {'aten::view': 0, 'aten::add_': 0, 'aten::slice': 0}


def test_device_allocator_reports_memory(device_registry):
    al = _allocator.CachingAllocator(None, alignment=32, round_to=512, segment_size=1 << 16)
    ember.library.register_device('profnpu', allocator=al, to_host=np.array,
                                  from_host=lambda a, index=None: _from_host(al, a), key='PrivateUse1')
    with ember.library.Library('aten', 'IMPL') as lib:
        lib.impl('add.Tensor', lambda a, b, alpha: _into(al, np.add(a, b)), 'PrivateUse1')
        x = ember.ones(100).to('profnpu')
        with profile(profile_memory=True) as p:
            y = x + x
            del y
    add = next(e for e in p.events() if e.name == 'aten::add')
    assert add.device_memory_usage == {'profnpu': 512} and add.cpu_memory_usage == 0
    assert sum(m.nbytes for m in p.events()._memory if m.device == 'profnpu') == 0     # allocated, then freed
    table = p.key_averages().table()
    assert 'PROFNPU Mem' in table and 'Self PROFNPU Mem' in table


def _from_host(al, a):
    return _into(al, a)


def _into(al, a):
    out = al.allocate(max(a.nbytes, 1))[:a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


# --- when off ------------------------------------------------------------------------------------

def test_nothing_is_recorded_or_wrapped_when_off():
    x = ember.ones(2)
    op = ember.ops.aten.add.Tensor
    ks = x._keys
    with profile(profile_memory=True) as p:
        x + x
        assert op.cache[ks] is not op._lookup(ks)[0]          # a recording wrapper while on
    n = len(p.events())
    assert [e.name for e in p.events()] == ['aten::add', '[memory]']     # the sum, and its free
    assert not dispatcher.OBSERVERS and not _allocator.MEMORY_OBSERVERS
    x + x
    (ember.ones(2, requires_grad=True) * 2).sum().backward()
    assert len(p.events()) == n                                # nothing more after the profile ended
    assert op.cache[ks] is op._lookup(ks)[0]                   # the entry point runs the plain kernel again


def test_with_stack_records_call_sites():
    x = ember.ones(2)

    def here():
        return x.neg()
    with profile(with_stack=True) as p:
        here()
    neg = next(e for e in p.events() if e.name == 'aten::neg')
    assert neg.stack[0].startswith(__file__) and neg.stack[0].endswith(': here')
    table = p.key_averages(group_by_stack_n=2).table()
    assert 'Source Location' in table and ': here' in table


def test_autograd_profiler_profile_is_torchs_legacy_api():
    def run(L):
        x = L.ones(3)
        with L.autograd.profiler.profile(record_shapes=True) as p:
            with L.autograd.profiler.record_function('block'):
                x.neg()
        return p
    ours, theirs = run(ember), run(torch)
    assert [(e.key, e.count) for e in ours.key_averages()] == [(e.key, e.count) for e in theirs.key_averages()]
    assert ours.table().splitlines()[1] == theirs.table().splitlines()[1]
    assert ours.self_cpu_time_total > 0 and ours.total_average().count == 2
    with pytest.raises(RuntimeError, match="didn't finish"):
        with ember.autograd.profiler.profile() as unfinished:
            unfinished.key_averages()



def test_a_wrapper_held_after_the_profiler_stopped_runs_the_plain_kernel():
    """Another thread may have fetched a recording wrapper from the cache just before the last observer left."""
    x = ember.ones(3)
    op = ember.ops.aten.neg.default
    with profile() as p:
        x.neg()
        held = op.cache[x._keys]
    assert held is not op._lookup(x._keys)[0]
    assert held(x._keys, x).tolist() == [-1., -1., -1.]          # no observer left: just the kernel
    assert dispatcher.observed_call('a node', lambda: 7) == 7
    assert [e.name for e in p.events()] == ['aten::neg']
