"""ember.export against torch.export: graph signatures, the exported graph's operators, the runnable module,
run_decompositions, the printout, save/load round trips (and files tampered with), and the error for
data-dependent control flow."""
import io
import json
import os
import pickle
import zipfile

import numpy as np
import pytest
import torch
import torch.export

import ember
import ember.utils._pytree
import ember.export
from ember.export._serialize import SerializeError
from ember.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode


def _copy_weights(em, tm):
    tm.load_state_dict({k: torch.from_numpy(np.array(v.detach().numpy())) for k, v in em.state_dict().items()})


def _t(x):
    return torch.from_numpy(np.array(x.numpy()))


def _models(lib):
    nn = lib.nn

    class Consts(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 2)
            self.register_buffer('shift', lib.ones(2), persistent=False)

        def forward(self, x, *, scale=2.0):
            return self.lin(x) * scale + self.shift + lib.tensor([1., 2.]), {'x': x}

    return {
        'mlp': (lambda: nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 3)),
                lambda: ((lib.randn(4, 6),), {})),
        'batchnorm_train': (lambda: nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.Linear(8, 3)),
                            lambda: ((lib.randn(4, 6),), {})),
        'consts': (Consts, lambda: ((lib.randn(4, 3),), {'scale': 3.0})),
    }


def _spec_tuple(s):
    arg = s.arg.name if hasattr(s.arg, 'name') else None
    return (s.kind.name, arg, s.target, getattr(s, 'persistent', None))


@pytest.mark.parametrize('name', ['mlp', 'batchnorm_train', 'consts'])
def test_graph_signature_matches_torch(name):
    (eb, eargs), (tb, _) = _models(ember)[name], _models(torch)[name]
    em, tm = eb(), tb()
    _copy_weights(em, tm)
    args, kwargs = eargs()
    targs, tkwargs = tuple(_t(a) for a in args), kwargs
    ep, tep = ember.export.export(em, args, kwargs), torch.export.export(tm, targs, tkwargs)
    ours = [_spec_tuple(s) for s in ep.graph_signature.input_specs]
    theirs = [_spec_tuple(s) for s in tep.graph_signature.input_specs]
    assert len(ours) > 2 and ours == theirs
    assert [s.kind.name for s in ep.graph_signature.output_specs] == \
        [s.kind.name for s in tep.graph_signature.output_specs]
    assert set(ep.state_dict) == set(tep.state_dict) and set(ep.constants) == set(tep.constants)
    assert ep.range_constraints == {}
    # the runnable module gives the original's outputs (and torch's)
    out, expected = ep.module()(*args, **kwargs), em(*args, **kwargs)
    tout = tep.module()(*targs, **tkwargs)
    flat = ember.utils._pytree.tree_leaves(out)
    tflat = [t for t in torch.utils._pytree.tree_leaves(tout)]
    assert len(flat) == len(ember.utils._pytree.tree_leaves(expected)) == len(tflat) >= 1
    for a, b, c in zip(flat, ember.utils._pytree.tree_leaves(expected), tflat):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_exported_operators_are_torchs_training_ir_where_ember_has_them():
    em, tm = _models(ember)['mlp'][0](), _models(torch)['mlp'][0]()
    x = ember.randn(4, 6)
    ep, tep = ember.export.export(em, (x,)), torch.export.export(tm, (_t(x),))
    ops = lambda g: [str(n.target) for n in g.nodes if n.op == 'call_function']   # noqa: E731
    assert ops(ep.graph) == ops(tep.graph) == ['aten.linear.default', 'aten.relu.default', 'aten.linear.default',
                                               'aten.gelu.default', 'aten.linear.default']
    # and after decomposition to core aten: torch writes `t` as permute, ember as transpose
    dec, tdec = ep.run_decompositions(), tep.run_decompositions()
    rename = {'aten.permute.default': 'aten.transpose.int'}
    assert ops(dec.graph) == [rename.get(o, o) for o in ops(tdec.graph)]
    assert [s.arg.name for s in dec.graph_signature.output_specs] == ['addmm_2']
    np.testing.assert_allclose(dec.module()(x).detach().numpy(), em(x).detach().numpy(), rtol=1e-6, atol=1e-6)


def test_buffer_mutation_runs_in_the_module():
    em = _models(ember)['batchnorm_train'][0]()
    x = ember.randn(4, 6)
    ep = ember.export.export(em, (x,))
    assert 'aten.add_.Tensor' in [str(n.target) for n in ep.graph.nodes]
    before = em[1].running_mean.clone()
    mod = ep.module()
    mod(x)
    assert mod.get_submodule('1').num_batches_tracked.item() == 1
    assert em[1].num_batches_tracked.item() == 1            # .module() shares the program's state, as torch's
    assert not np.allclose(em[1].running_mean.numpy(), before.numpy())
    fresh = _models(ember)['batchnorm_train'][0]()
    fresh.load_state_dict({k: v for k, v in ep.state_dict.items()})


def test_printout_reads_like_torchs():
    em = _models(ember)['batchnorm_train'][0]()
    text = str(ember.export.export(em, (ember.randn(4, 6),)))
    assert text.startswith('ExportedProgram:\n    class GraphModule(torch.nn.Module):\n        def forward(self, '
                           'p_0_weight: "f32[8, 6]", p_0_bias: "f32[8]"')
    assert 'b_1_num_batches_tracked: "i64[]"' in text and 'input: "f32[4, 6]"' in text
    assert 'linear: "f32[4, 8]" = ember.ops.aten.linear.default(input_1, p_0_weight, p_0_bias)' in text
    assert '# File: ' in text and 'linear.py' in text and 'in forward, code: ' in text
    assert "    b_1_running_mean: BUFFER target='1.running_mean' persistent=True\n" in text
    assert 'Graph signature: \n    # inputs\n' in text and text.rstrip().endswith('Range constraints: {}')


def test_errors_like_torchs():
    with pytest.raises(ValueError, match='Expected `mod` to be an instance of `torch.nn.Module`'):
        ember.export.export(lambda x: x, (ember.randn(2),))
    with pytest.raises(ValueError, match='Expecting `args` to be a tuple'):
        ember.export.export(ember.nn.ReLU(), [ember.randn(2)])
    ep = ember.export.export(ember.nn.ReLU(), (ember.randn(2),))
    with pytest.raises(RuntimeError, match='Unable to call ExportedProgram directly'):
        ep(ember.randn(2))
    assert ember.export.export(ember.nn.ReLU(), (ember.randn(2),), dynamic_shapes=({0: ember.export.Dim.STATIC},))


class _Branchy(ember.nn.Module):
    def forward(self, x):
        if x.sum() > 0:         # data-dependent: the line the error names
            return x * 2
        return x


def test_data_dependent_control_flow_says_which_line_and_why():
    with pytest.raises(GuardOnDataDependentSymNode) as info:
        ember.export.export(_Branchy(), (ember.randn(3),))
    msg = str(info.value)
    assert 'Could not guard on data-dependent expression' in msg
    assert 'test_export.py' in msg and 'in forward' in msg and 'if x.sum() > 0:' in msg
    assert 'no data' in msg and 'ember.where' in msg
    with pytest.raises(Exception, match='data-dependent'):         # torch refuses it too
        torch.export.export(type('B', (torch.nn.Module,), {'forward': lambda s, x: x * 2 if x.sum() > 0 else x})(),
                            (torch.randn(3),))


# --- save / load --------------------------------------------------------------------------------------

def _cnn():
    nn = ember.nn
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(4 * 4 * 4, 5)).eval()


def _round_trip(ep):
    buf = io.BytesIO()
    ember.export.save(ep, buf)
    return ember.export.load(io.BytesIO(buf.getvalue())), buf.getvalue()


@pytest.mark.parametrize('name', ['mlp', 'consts', 'cnn', 'decomposed'])
def test_save_load_round_trip(name, tmp_path):
    if name == 'cnn':
        model, args, kwargs = _cnn(), (ember.randn(2, 3, 8, 8),), {}
    else:
        build, make = _models(ember)['mlp' if name == 'decomposed' else name]
        model, (args, kwargs) = build(), make()
    ep = ember.export.export(model, args, kwargs)
    if name == 'decomposed':
        ep = ep.run_decompositions()
    path = tmp_path / 'model.pt2'
    ember.export.save(ep, str(path), extra_files={'note.txt': 'hello'})
    extra = {'note.txt': ''}
    loaded = ember.export.load(str(path), extra_files=extra)
    assert extra['note.txt'] == 'hello'
    assert str(loaded) == str(ep)
    assert [_spec_tuple(s) for s in loaded.graph_signature.input_specs] == \
        [_spec_tuple(s) for s in ep.graph_signature.input_specs]
    out, expected = loaded.module()(*args, **kwargs), model(*args, **kwargs)
    for a, b in zip(ember.utils._pytree.tree_leaves(out), ember.utils._pytree.tree_leaves(expected)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)
    # the documented layout; the weights are a checkpoint torch reads with weights_only=True
    names = zipfile.ZipFile(path).namelist()
    assert {'ember_export/version', 'ember_export/program.json', 'ember_export/weights.pt',
            'ember_export/constants.pt', 'ember_export/code.py'} <= set(names)
    with zipfile.ZipFile(path) as z:
        weights = torch.load(io.BytesIO(z.read('ember_export/weights.pt')), weights_only=True)
    assert set(weights) == set(ep.state_dict)
    for k, v in weights.items():
        np.testing.assert_array_equal(v.detach().numpy(), ep.state_dict[k].detach().numpy())


def _tamper(data, name, content):
    src, out = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(out, 'w') as z:
        for item in src.namelist():
            z.writestr(item, content if item == name else src.read(item))
    return io.BytesIO(out.getvalue())


class _Payload:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (exec, (f"open({self.path!r}, 'w').write('pwned')",))


def test_loading_a_tampered_file_cannot_execute_code(tmp_path):
    ep = ember.export.export(_models(ember)['mlp'][0](), (ember.randn(4, 6),))
    _, data = _round_trip(ep)
    marker = str(tmp_path / 'marker')
    prog = json.loads(zipfile.ZipFile(io.BytesIO(data)).read('ember_export/program.json'))

    # a pickle that runs code when unpickled, in place of the weights
    buf = io.BytesIO()
    torch.save({'0.weight': _Payload(marker)}, buf)        # a checkpoint zip whose pickle calls exec
    evil = buf.getvalue()
    with pytest.raises(pickle.UnpicklingError):
        ember.export.load(_tamper(data, 'ember_export/weights.pt', evil))
    assert not os.path.exists(marker)

    # code in the readable source: never opened by load
    code = f"open({marker!r}, 'w').write('pwned')\n"
    loaded = ember.export.load(_tamper(data, 'ember_export/code.py', code))
    loaded.module()(ember.randn(4, 6))
    assert not os.path.exists(marker)

    # code smuggled into the JSON graph: names, targets, keyword names, state paths, arguments
    injections = [
        ('name', lambda p: p['nodes'][2].__setitem__('name', f"x = open({marker!r}, 'w')#")),
        ('target', lambda p: p['nodes'][8].__setitem__('target', 'builtins.exec')),
        ('dunder', lambda p: p['nodes'][8].__setitem__('target', 'aten.__class__.__init__')),
        ('kwarg', lambda p: p['nodes'][9].__setitem__('kwargs', {f"a=open({marker!r},'w'),b": 1})),
        ('path', lambda p: p['input_specs'][0].__setitem__('target', f'0.weight"); open({marker!r}, "w"); ("')),
        ('arg', lambda p: p['nodes'][8].__setitem__('args', [{'eval': f"open({marker!r}, 'w')"}])),
        ('placeholder', lambda p: p['nodes'][0].__setitem__('target', f"x=open({marker!r},'w')")),
    ]
    for what, edit in injections:
        bad = json.loads(json.dumps(prog))
        edit(bad)
        with pytest.raises(SerializeError):
            m = ember.export.load(_tamper(data, 'ember_export/program.json', json.dumps(bad)))
            m.module()(ember.randn(4, 6))
        assert not os.path.exists(marker), what
    # the same state path in the weights too, so that only the path check stands in the way
    bad = json.loads(json.dumps(prog))
    path = f'0.weight"); open({marker!r}, "w"); ("'
    bad['input_specs'][0]['target'] = path
    buf = io.BytesIO()
    torch.save({path if k == '0.weight' else k: _t(v.detach()) for k, v in ep.state_dict.items()}, buf)
    both = _tamper(_tamper(data, 'ember_export/program.json', json.dumps(bad)).getvalue(),
                   'ember_export/weights.pt', buf.getvalue())
    with pytest.raises(SerializeError, match='invalid state path'):
        ember.export.load(both).module()(ember.randn(4, 6))
    assert not os.path.exists(marker)
    # a string argument is data: it stays a string literal in the generated code
    bad = json.loads(json.dumps(prog))
    gelu = next(n for n in bad['nodes'] if n.get('target') == 'aten.gelu.default')
    gelu['kwargs'] = {'approximate': f"none'); open({marker!r}, 'w'); ('"}
    with pytest.raises(RuntimeError):
        ember.export.load(_tamper(data, 'ember_export/program.json', json.dumps(bad))).module()(ember.randn(4, 6))
    assert not os.path.exists(marker)
