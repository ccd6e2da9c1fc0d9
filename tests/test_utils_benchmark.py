"""ember.utils.benchmark against torch.utils.benchmark: the same Timer calls give Measurements with the same
fields and repr layout, and the same Measurements give identical reprs and identical Compare tables (timings
themselves are never compared, only what is printed about fixed ones)."""
import os
import re
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.utils.benchmark as tb

import ember
import ember.utils.benchmark as eb

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# fixed per-block times: a tight set, a noisy one (IQR warnings), one of each size class
TIGHT = [1.00e-5, 1.01e-5, 1.02e-5, 1.005e-5, 1.015e-5]
NOISY = [1e-5, 1.1e-5, 1.2e-5, 1.3e-5, 1.25e-5]
SPREAD = [3e-3, 5e-3, 2e-3, 9e-3]


def both(make):
    """``make(lib)`` with lib = torch.utils.benchmark and ember.utils.benchmark."""
    return make(tb), make(eb)


def without_address(text):
    """A Measurement repr without its first line (``<...Measurement object at 0x...>``, naming the package)."""
    first, _, rest = text.partition('\n')
    assert re.fullmatch(r'<(torch|ember)\.utils\.benchmark\.utils\.common\.Measurement object at 0x[0-9a-f]+>', first)
    return rest


def measurement(lib, times, number=10, **spec):
    return lib.Measurement(number, list(times), lib.TaskSpec(spec.pop('stmt', 'x + 1'), spec.pop('setup', 'pass'),
                                                            **spec))


@pytest.mark.parametrize('times', [TIGHT, NOISY, SPREAD, [2e-6], [2e-6, 3e-6], [7e-10, 8e-10, 9e-10, 1e-9]])
@pytest.mark.parametrize('spec', [{}, {'label': 'add', 'sub_label': 'float', 'description': 'n=4'},
                                  {'stmt': 'y = x + 1\ny * 2', 'setup': 'x = 1\nz = 2', 'num_threads': 4},
                                  {'setup': 'x = torch.ones(3)', 'sub_label': 's', 'env': 'A'}])
def test_measurement_repr_and_statistics_match_torch(times, spec):
    theirs, ours = both(lambda lib: measurement(lib, times, **dict(spec)))
    assert without_address(repr(ours)) == without_address(repr(theirs))
    for field in ('number_per_run', 'raw_times', 'times', 'title', 'label', 'sub_label', 'description', 'env',
                  'num_threads', 'stmt', 'setup', 'metadata', 'has_warnings', 'as_row_name'):
        assert getattr(ours, field) == getattr(theirs, field), field
    for field in ('mean', 'median', 'iqr'):
        assert getattr(ours, field) == pytest.approx(getattr(theirs, field), rel=1e-12), field
    if len(times) > 1:
        assert ours.significant_figures == theirs.significant_figures
        for threshold in (0.01, 0.1, 0.5):
            assert ours.meets_confidence(threshold) == theirs.meets_confidence(threshold)


def test_task_spec_summaries_match_torch():
    for kw in ({'stmt': 'a', 'setup': 'pass'}, {'stmt': 'a\nb', 'setup': 'x=1', 'sub_label': 'q'},
               {'stmt': 'a', 'setup': 'x=1\ny=2', 'description': 'd', 'label': 'L'}):
        theirs, ours = both(lambda lib: lib.TaskSpec(**kw))
        assert (ours.title, ours.setup_str(), ours.summarize()) == (theirs.title, theirs.setup_str(), theirs.summarize())
        assert hash(ours) == hash(eb.TaskSpec(**kw)) and ours == eb.TaskSpec(**kw)


def test_helpers_match_torch():
    for t in (3e-10, 2e-9, 5e-7, 1e-6, 4.2e-5, 9.99e-4, 0.5, 3.0, 2000.0):
        assert eb.select_unit(t) == tb.select_unit(t), t
    for x, n in ((3.14159, 2), (123456.0, 3), (0.000123456, 1), (9.96, 2), (-2.5, 1)):
        assert eb.trim_sigfig(x, n) == pytest.approx(tb.trim_sigfig(x, n), rel=1e-6), (x, n)
    assert [eb.unit_to_english(u) for u in ('ns', 'us', 'ms', 's')] == \
        [tb.unit_to_english(u) for u in ('ns', 'us', 'ms', 's')]
    assert eb.ordered_unique([3, 1, 3, 2, 1]) == tb.ordered_unique([3, 1, 3, 2, 1]) == [3, 1, 2]


def test_merge_matches_torch():
    def make(lib):
        a = measurement(lib, [2e-5, 4e-5], number=2, label='L')
        b = measurement(lib, [1e-5], number=1, label='L')
        c = measurement(lib, [5e-5], number=5, label='M')
        return lib.Measurement.merge([a, c, b])
    theirs, ours = both(make)
    assert len(ours) == len(theirs) == 2
    for o, t in zip(ours, theirs):
        assert (o.number_per_run, o.raw_times, o.label, o.metadata) == (t.number_per_run, t.raw_times, t.label,
                                                                       t.metadata)


def _grid(lib, times_by_cell, **extra):
    out = []
    for (sub, desc, threads, env, label), times in times_by_cell.items():
        out.append(measurement(lib, times, label=label, sub_label=sub, description=desc, num_threads=threads,
                               env=env, **extra))
    return out


CELLS = {  # (sub_label, description, num_threads, env, label): times
    ('float', 'n=1', 1, None, 'add'): TIGHT,
    ('float', 'n=100', 1, None, 'add'): [t * 30 for t in NOISY],
    ('int', 'n=1', 1, None, 'add'): [t * 2.5 for t in TIGHT],
    ('int', 'n=100', 1, None, 'add'): [t * 600 for t in TIGHT],
    ('float', 'n=1', 4, None, 'add'): [t * 1.05 for t in TIGHT],
    ('int', 'n=100', 4, None, 'add'): [t * 7 for t in SPREAD],      # ('int', 'n=1', 4) left empty
    ('float', 'n=1', 1, None, 'mul'): SPREAD,
}


@pytest.mark.parametrize('options', [(), ('trim',), ('colorize',), ('rowwise',), ('warnings',),
                                     ('trim', 'colorize', 'warnings')])
def test_compare_table_is_torchs(options):
    def render(lib):
        c = lib.Compare(_grid(lib, CELLS))
        c.extend_results([measurement(lib, TIGHT, label='add', sub_label='float', description='n=1')])  # a replicate
        if 'trim' in options:
            c.trim_significant_figures()
        if 'colorize' in options or 'rowwise' in options:
            c.colorize(rowwise='rowwise' in options)
        if 'warnings' in options:
            c.highlight_warnings()
        return str(c)
    theirs, ours = both(render)
    assert ours == theirs
    assert '[' in ours and '1 threads: ' in ours and '4 threads: ' in ours and 'Times are in' in ours


def test_compare_rows_columns_and_units():
    ours = str(eb.Compare(_grid(eb, CELLS)))
    add, mul = ours.split('\n\n[')      # one table per label
    lines = add.splitlines()
    assert lines[0].startswith('[') and ' add ' in lines[0] and lines[0].endswith(']')
    assert [c.strip() for c in lines[1].split('|')] == ['', 'n=1', 'n=100']
    assert lines[2].startswith('1 threads: --') and lines[5].startswith('4 threads: --')
    assert len({len(lines[i]) for i in (1, 2, 5)}) == 1          # the rules span the header's width
    rows = [ln for ln in lines if '|' in ln][1:]
    assert [r.split('|')[0].strip() for r in rows] == ['float', 'int', 'float', 'int']
    assert all(len(r.split('|')) == 3 for r in rows)
    assert rows[3].split('|')[1].strip() == ''                     # the missing cell stays blank
    assert lines[-1] == 'Times are in microseconds (us).'
    assert mul.splitlines()[3].split('|')[1].strip() == '400.0'       # 4e-3 s / 10 runs
    assert 'Times are in microseconds (us).' in mul
    ms = str(eb.Compare([measurement(eb, SPREAD, number=1, label='slow')]))
    assert 'Times are in milliseconds (ms).' in ms


def test_compare_with_envs_is_torchs():
    cells = {('a', 'n=1', 1, env, 'L'): TIGHT for env in ('A', 'BBB')}
    cells.update({('bb', 'n=1', 1, env, 'L'): NOISY for env in ('A', 'BBB')})
    theirs, ours = both(lambda lib: str(lib.Compare(_grid(lib, cells))))
    assert ours == theirs and '(BBB)' in ours


def test_compare_rejects_non_measurements():
    with pytest.raises(ValueError, match='Expected an instance of `Measurement`'):
        eb.Compare([1])
    c = eb.Compare([])
    with pytest.raises(ValueError, match='Expected an instance of `Measurement`'):
        c.extend_results(['x'])


def test_compare_print(capsys):
    c = eb.Compare(_grid(eb, CELLS))
    c.print()
    assert capsys.readouterr().out == str(c) + '\n'


def _layout(text):
    """A Measurement repr with the numbers blanked: what must agree between two real timings."""
    return re.sub(r'\d+(\.\d+)?', '#', without_address(text))


@pytest.mark.parametrize('method', ['timeit', 'blocked_autorange', 'adaptive_autorange'])
def test_timer_measurements_have_torchs_structure(method):
    calls = {'timeit': lambda t: t.timeit(number=50), 'blocked_autorange': lambda t: t.blocked_autorange(
        min_run_time=0.02), 'adaptive_autorange': lambda t: t.adaptive_autorange(threshold=0.5, max_run_time=0.2)}
    got = {}
    for lib, T in ((tb, torch), (eb, ember)):
        timer = lib.Timer('y = x + 1', setup='x = torch.ones(4)', label='add', sub_label='ones',
                          description='n=4', env='e')
        got[lib] = m = calls[method](timer)
        assert isinstance(m, lib.Measurement)
    theirs, ours = got[tb], got[eb]
    assert (ours.title, ours.label, ours.sub_label, ours.description, ours.env, ours.num_threads, ours.stmt,
            ours.setup) == (theirs.title, theirs.label, theirs.sub_label, theirs.description, theirs.env,
                            theirs.num_threads, theirs.stmt, theirs.setup)
    assert ours.task_spec == eb.TaskSpec('y = x + 1', 'x = torch.ones(4)', '', 'add', 'ones', 'n=4', 'e', 1)
    assert all(t > 0 for t in ours.raw_times) and ours.times == [t / ours.number_per_run for t in ours.raw_times]
    if method == 'timeit':
        assert ours.number_per_run == theirs.number_per_run == 50 and len(ours.raw_times) == 1
    else:
        # four blocks at least, unless the time ran out first (a loaded machine: one block may take 0.2 s)
        assert len(ours.raw_times) >= (4 if method == 'adaptive_autorange' else 1) or sum(ours.raw_times) >= 0.2
    # the repr has the same lines with the same labels (warnings depend on noise: compared without them)
    strip = lambda s: [ln for ln in _layout(repr(s)).splitlines() if 'WARNING' not in ln and ln.startswith('  ')
                       and 'suggests' not in ln and 'indicate' not in ln]
    n_ours, n_theirs = len(ours.raw_times), len(theirs.raw_times)
    if (n_ours >= 4) == (n_theirs >= 4) and (n_ours > 1) == (n_theirs > 1):
        assert strip(ours) == strip(theirs)
    assert _layout(repr(ours)).splitlines()[:3] == ['add: ones', 'n=#', 'setup: x = torch.ones(#)']


def test_timer_dedents_and_strips_like_torch():
    stmt = '''
        y = x + 1
        z = y * 2
    '''
    theirs, ours = both(lambda lib: lib.Timer(stmt, setup='\n    x = 1\n', globals={}))
    assert ours._task_spec == eb.TaskSpec(**{f: getattr(theirs._task_spec, f) for f in
                                             ('stmt', 'setup', 'global_setup', 'label', 'sub_label',
                                              'description', 'env', 'num_threads')})
    assert ours._task_spec.stmt == 'y = x + 1\nz = y * 2'


def test_globals_are_copied_and_torch_is_provided():
    g = {'x': ember.ones(3), 'seen': []}
    m = eb.Timer('seen.append(type(torch.ones(1)).__module__); x + 1', globals=g).timeit(number=3)
    assert set(g) == {'x', 'seen'}                    # __builtins__ and 'torch' did not leak into the caller's dict
    assert g['seen'] and set(g['seen']) == {ember.ones(1).__class__.__module__}
    assert m.number_per_run == 3
    mine = object()
    assert eb.Timer('assert torch is mine', globals={'torch': mine, 'mine': mine}).timeit(2).number_per_run == 2


def test_setup_runs_before_each_timing_and_defines_names():
    calls = []
    timer = eb.Timer('y + 1', setup='calls.append(1); y = 41', globals={'calls': calls})
    timer.timeit(number=5)
    assert len(calls) == 2                         # the warm-up and the timed call each run setup once
    with pytest.raises(NameError):
        eb.Timer('undefined_name + 1').timeit(number=1)


def test_num_threads_is_set_for_the_statement_and_restored():
    before = ember.get_num_threads()
    seen = []
    for method in (lambda t: t.timeit(10), lambda t: t.blocked_autorange(min_run_time=0.01),
                   lambda t: t.adaptive_autorange(max_run_time=0.05)):
        seen.clear()
        m = method(eb.Timer('seen.append(torch.get_num_threads())', globals={'seen': seen}, num_threads=3))
        assert set(seen) == {3} and m.num_threads == 3
        assert ember.get_num_threads() == before
    seen.clear()
    eb.Timer('seen.append(torch.get_num_threads())', globals={'seen': seen}).timeit(4)
    assert set(seen) == {1}                         # default: one thread, as torch's Timer
    with pytest.raises(ZeroDivisionError):
        eb.Timer('1 / 0', num_threads=5).timeit(1)
    assert ember.get_num_threads() == before        # restored when the statement raises, too


def test_blocked_autorange_callback_sees_every_block():
    seen = []
    m = eb.Timer('pass').blocked_autorange(callback=lambda number, t: seen.append((number, t)), min_run_time=0.02)
    assert seen == [(m.number_per_run, t) for t in m.raw_times]
    assert sum(m.raw_times) >= 0.02


def test_adaptive_autorange_stops_at_max_run_time():
    m = eb.Timer('sum(range(200))').adaptive_autorange(threshold=0.0, max_run_time=0.05)   # 0 can never be met
    assert 0.05 < sum(m.raw_times) < 1.0


def test_errors_match_torch():
    for call, exc in ((lambda lib: lib.Timer(lambda: 1), ValueError),
                      (lambda lib: lib.Timer('x', global_setup='#include <x>'), ValueError),
                      (lambda lib: lib.Timer('x', language='fortran'), ValueError),
                      (lambda lib: lib.Timer('pass').repeat(), NotImplementedError),
                      (lambda lib: lib.Timer('pass').autorange(), NotImplementedError)):
        for lib in (tb, eb):
            with pytest.raises(exc):
                call(lib)
    with pytest.raises(NotImplementedError, match='Python statements only'):
        eb.Timer('x', language='cpp')
    with pytest.raises(OSError, match='collect_callgrind is not supported'):
        eb.Timer('pass').collect_callgrind()
    with pytest.raises(ValueError, match='repeats'):
        eb.Timer('pass').collect_callgrind(repeats=0)
    assert eb.Language.PYTHON.value == tb.Language.PYTHON.value and eb.Language.CPP.value == tb.Language.CPP.value


def test_public_names_are_torchs():
    ours = set(eb.__all__)
    assert ours <= set(dir(tb))
    assert {'Timer', 'Measurement', 'Compare', 'TaskSpec', 'Colorize', 'Language', 'select_unit'} <= ours
    import ember.utils.benchmark.utils.common, ember.utils.benchmark.utils.timer  # noqa: E401,F401  torch's paths


def test_under_ember_run(tmp_path):
    (tmp_path / 'bench.py').write_text(textwrap.dedent('''
        import torch
        from torch.utils.benchmark import Timer, Compare
        import torch.utils.benchmark as benchmark
        m = Timer('x + 1', globals={'x': torch.ones(3)}).blocked_autorange(min_run_time=0.02)
        print(m)
        r = [benchmark.Timer('x * 2', globals={'x': torch.ones(n)}, label='mul', description=f'n={n}')
             .blocked_autorange(min_run_time=0.01) for n in (1, 8)]
        Compare(r).print()
    '''))
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, '-m', 'ember', 'run', 'bench.py'], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.splitlines()
    # torch's class path, as torch prints it (NOTE [torch's class names under ember run])
    assert lines[0].startswith('<torch.utils.benchmark.utils.common.Measurement object at 0x')
    assert lines[1] == 'x + 1' and re.fullmatch(r'  (Median: )?\d+\.\d\d (ns|us|ms|s)', lines[2])
    assert any(ln.startswith('[') and ' mul ' in ln for ln in lines) and any('Times are in' in ln for ln in lines)
