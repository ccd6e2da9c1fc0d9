"""ember.onnx.export: for each model the ONNX checker passes and onnxruntime's outputs equal ember's; dynamic
axes, opsets, names, constant folding and the errors for what cannot be exported."""
import io
import math

import numpy as np
import pytest

import ember
import ember.utils._pytree
from ember.onnx.errors import OnnxExporterError, UnsupportedOperatorError

onnx = pytest.importorskip('onnx')
ort = pytest.importorskip('onnxruntime')
nn = ember.nn
leaves = ember.utils._pytree.tree_leaves


def _export(model, args, **kw):
    buf = io.BytesIO()
    program = ember.onnx.export(model, args, buf, **kw)
    proto = onnx.load_model_from_string(buf.getvalue())
    onnx.checker.check_model(proto, full_check=True)
    return program, proto, ort.InferenceSession(buf.getvalue(), providers=['CPUExecutionProvider'])


def _check_outputs(model, session, args, atol=1e-5):
    tensors = [a for a in leaves(args) if isinstance(a, ember.Tensor)]
    inputs = session.get_inputs()
    assert len(inputs) == len(tensors)
    outs = session.run(None, {i.name: t.numpy() for i, t in zip(inputs, tensors)})
    with ember.no_grad():
        expected = leaves(model(*args))
    assert len(outs) == len(expected) >= 1
    for o, e in zip(outs, expected):
        assert o.shape == tuple(e.shape)
        np.testing.assert_allclose(o, e.numpy(), rtol=1e-4, atol=atol)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, -1)
        scores = (q @ k.transpose(-2, -1) / 4).softmax(-1)
        return nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True) + scores @ v


class PositionalEncoding(nn.Module):            # word_language_model/model.py
    def __init__(self, d_model, max_len=64):
        super().__init__()
        self.dropout = nn.Dropout(0.1)
        pe = ember.zeros(max_len, d_model)
        position = ember.arange(0, max_len, dtype=ember.float).unsqueeze(1)
        div_term = ember.exp(ember.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = ember.sin(position * div_term)
        pe[:, 1::2] = ember.cos(position * div_term)
        self.register_buffer('pe', pe.unsqueeze(0).transpose(0, 1))

    def forward(self, x):
        return self.dropout(x + self.pe[:x.size(0), :])


class TransformerModel(nn.Module):              # word_language_model's --model Transformer
    def __init__(self, ntoken=33, ninp=16, nhead=2, nhid=32, nlayers=2):
        super().__init__()
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(ninp, nhead, nhid, 0.5), nlayers,
                                             enable_nested_tensor=False)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.decoder = nn.Linear(ninp, ntoken)
        self.ninp = ninp

    def forward(self, src):
        if self.src_mask is None or self.src_mask.size(0) != len(src):
            self.src_mask = ember.log(ember.tril(ember.ones(len(src), len(src)))).to(src.device)
        src = self.pos_encoder(self.input_emb(src) * math.sqrt(self.ninp))
        return nn.functional.log_softmax(self.decoder(self.encoder(src, mask=self.src_mask)), dim=-1)


class RNNModel(nn.Module):                      # word_language_model's --model LSTM/GRU/RNN_TANH
    def __init__(self, kind, ntoken=33, ninp=16, nhid=16, nlayers=2):
        super().__init__()
        self.drop = nn.Dropout(0.2)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, kind)(ninp, nhid, nlayers, dropout=0.2)
        self.decoder = nn.Linear(nhid, ntoken)
        self.ntoken = ntoken

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.drop(self.encoder(input)), hidden)
        decoded = self.decoder(self.drop(output)).view(-1, self.ntoken)
        return nn.functional.log_softmax(decoded, dim=1), hidden


MODELS = {
    'mlp': (lambda: nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 16),
                                  nn.SiLU(), nn.Linear(16, 4), nn.Softmax(-1)),
            lambda: (ember.randn(5, 16),)),
    'cnn': (lambda: nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2), nn.AvgPool2d(2),
                                  nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10)),
            lambda: (ember.randn(2, 3, 16, 16),)),
    'embedding_layernorm': (lambda: nn.Sequential(nn.Embedding(10, 8), nn.LayerNorm(8)),
                            lambda: (ember.tensor([[1, 2, 3], [4, 5, 9]]),)),
    'attention': (Attention, lambda: (ember.randn(2, 5, 16),)),
    'multihead_attention': (lambda: nn.MultiheadAttention(16, 4, batch_first=True),
                            lambda: (ember.randn(2, 5, 16),) * 3),
    'lstm': (lambda: nn.LSTM(8, 16, num_layers=2, batch_first=True), lambda: (ember.randn(2, 5, 8),)),
    'gru': (lambda: nn.GRU(8, 16), lambda: (ember.randn(5, 2, 8),)),
    'rnn_relu_with_h0': (lambda: nn.RNN(8, 16, nonlinearity='relu'),
                         lambda: (ember.randn(5, 2, 8), ember.randn(1, 2, 16))),
    'transformer_encoder': (lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 2, 32, batch_first=True),
                                                          2, enable_nested_tensor=False),
                            lambda: (ember.randn(2, 5, 16),)),
    'word_language_model_transformer': (TransformerModel, lambda: (ember.randint(0, 33, (7, 3)),)),
    'word_language_model_lstm': (lambda: RNNModel('LSTM'), lambda: (
        ember.randint(0, 33, (7, 3)), (ember.zeros(2, 3, 16), ember.zeros(2, 3, 16)))),
    'word_language_model_gru': (lambda: RNNModel('GRU'), lambda: (ember.randint(0, 33, (7, 3)),
                                                                  ember.zeros(2, 3, 16))),
}


@pytest.mark.parametrize('name', sorted(MODELS))
def test_model_exports_and_onnxruntime_agrees(name):
    build, make_args = MODELS[name]
    ember.manual_seed(0)
    model, args = build(), make_args()
    model.train()                       # export puts it in eval mode (torch's default), and back
    _, proto, session = _export(model, args)
    assert model.training
    model.eval()
    _check_outputs(model, session, args)
    assert not [n for n in proto.graph.node if n.domain not in ('', 'ai.onnx')]


def test_operators_written_for_each_family():
    def op_types(name, **kw):
        build, make_args = MODELS[name]
        return {n.op_type for n in _export(build(), make_args(), **kw)[1].graph.node}
    assert {'Gemm', 'Relu', 'Erf', 'Sigmoid', 'Softmax'} <= op_types('mlp')
    # (AdaptiveAvgPool2d(1) is torch's mean over H and W, exported as ReduceMean as torch's exporter does)
    assert {'Conv', 'BatchNormalization', 'MaxPool', 'AveragePool', 'ReduceMean', 'Reshape'} <= op_types('cnn')
    assert {'Gather', 'LayerNormalization'} <= op_types('embedding_layernorm')
    assert {'MatMul', 'Transpose', 'Softmax', 'Where'} <= op_types('attention')
    assert {'Gemm', 'Sigmoid', 'Tanh', 'Concat'} <= op_types('lstm')


def test_constant_folding_turns_the_mask_into_an_initializer():
    model = TransformerModel().eval()
    args = (ember.randint(0, 33, (7, 3)),)
    _, proto, session = _export(model, args)
    assert model.src_mask is None       # export ran on fake tensors: the mask it cached is not kept
    assert not {'Trilu', 'ConstantOfShape', 'Log'} & {n.op_type for n in proto.graph.node}
    _check_outputs(model, session, args)
    model.src_mask = None               # running it eagerly cached a real mask, which export would read
    _, unfolded, session = _export(model, args, do_constant_folding=False)
    assert {'Trilu', 'ConstantOfShape', 'Log'} <= {n.op_type for n in unfolded.graph.node}
    _check_outputs(model, session, args)


@pytest.mark.parametrize('name,axes,other', [
    ('mlp', {'x': {0: 'batch'}}, [(7, 16)]),
    ('cnn', {'x': {0: 'batch'}}, [(5, 3, 16, 16)]),
    ('transformer_encoder', {'x': {0: 'batch', 1: 'seq'}}, [(3, 7, 16), (1, 2, 16)]),
    ('lstm', {'x': [0]}, [(4, 5, 8)]),
])
def test_dynamic_axes(name, axes, other):
    build, make_args = MODELS[name]
    model = build().eval()
    _, proto, session = _export(model, make_args(), input_names=['x'], output_names=['y'], dynamic_axes=axes)
    dims = [d.dim_param or d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim]
    spec = axes['x'] if isinstance(axes['x'], dict) else {a: f'x_dynamic_axes_{i + 1}' for i, a in enumerate(axes['x'])}
    assert [dims[a] for a in spec] == list(spec.values())
    out_dims = [d.dim_param for d in proto.graph.output[0].type.tensor_type.shape.dim]
    assert out_dims[0] == spec[0]                    # the batch of the output follows the input's
    for shape in other:
        _check_outputs(model, session, (ember.randn(*shape),))


def test_dynamic_axis_that_changes_the_graph_is_refused():
    with pytest.raises(OnnxExporterError, match='graph changes with the size of axis 1'):
        ember.onnx.export(nn.LSTM(8, 16, batch_first=True), (ember.randn(2, 5, 8),), io.BytesIO(),
                          input_names=['x'], dynamic_axes={'x': {1: 'seq'}})
    with pytest.raises(OnnxExporterError, match='neither inputs'):
        ember.onnx.export(nn.Linear(2, 2), (ember.randn(2, 2),), io.BytesIO(), dynamic_axes={'nope': [0]})


class _Cumsum(nn.Module):
    def forward(self, x):
        return x.cumsum(0)


def test_unsupported_operator_names_the_operator_and_the_opset():
    with pytest.raises(UnsupportedOperatorError) as info:
        ember.onnx.export(_Cumsum(), (ember.randn(3),), io.BytesIO(), opset_version=17)
    msg = str(info.value)
    assert "Exporting the operator 'aten::cumsum' to ONNX opset version 17 is not supported" in msg
    assert 'test_onnx.py' in msg and 'x.cumsum(0)' in msg
    # the maxpool indices have no ONNX equivalent
    pool = nn.MaxPool2d(2, return_indices=True)
    with pytest.raises(OnnxExporterError, match='no ONNX equivalent'):
        ember.onnx.export(pool, (ember.randn(1, 1, 4, 4),), io.BytesIO())
    with pytest.raises(OnnxExporterError, match='opset versions 13'):
        ember.onnx.export(nn.ReLU(), (ember.randn(2),), io.BytesIO(), opset_version=11)


@pytest.mark.parametrize('opset', [13, 17, 20])
def test_opsets_decompose_what_they_lack(opset):
    model = nn.Sequential(nn.Linear(6, 6), nn.LayerNorm(6), nn.GELU(), nn.Hardswish()).eval()
    args = (ember.randn(3, 6),)
    _, proto, session = _export(model, args, opset_version=opset)
    ops = {n.op_type for n in proto.graph.node}
    assert proto.opset_import[0].version == opset
    assert ('LayerNormalization' in ops) == (opset >= 17) and ('Gelu' in ops) == (opset >= 20)
    _check_outputs(model, session, args)


def test_names_parameters_and_the_program(tmp_path):
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU()).eval()
    x = ember.randn(2, 4)
    path = tmp_path / 'model.onnx'
    program = ember.onnx.export(model, (x,), str(path), input_names=['features'], output_names=['scores'])
    proto = onnx.load(str(path))
    assert [i.name for i in proto.graph.input] == ['features'] and [o.name for o in proto.graph.output] == ['scores']
    assert sorted(i.name for i in proto.graph.initializer) == ['0.bias', '0.weight']
    np.testing.assert_allclose(program(x)[0].numpy(), model(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    # without the parameters: they become inputs
    proto = ember.onnx.export(model, (x,), export_params=False).model_proto
    assert [i.name for i in proto.graph.input] == ['input', '0.weight', '0.bias'] and not proto.graph.initializer
    # an ExportedProgram exports as well
    ep = ember.export.export(model, (x,))
    assert [n.op_type for n in ember.onnx.export(ep, (x,)).model_proto.graph.node] == ['Gemm', 'Relu']
