"""A tiny GPT (the benchmark's architecture: token + position embeddings, causal self-attention blocks with
a registered tril buffer, LayerNorm, MLP, cross_entropy over the vocabulary) written once against the
torch API and run on both libraries with identical weights: loss, logits and every gradient."""
import numpy as np

import torch
import ember
from test_nn_util import compare_module


def build(lib, vocab=65, block=8, n_embd=16, n_head=2, n_layer=2, dropout=0.0):
    nn, F = lib.nn, lib.nn.functional

    class Head(nn.Module):
        def __init__(self, head_size):
            super().__init__()
            self.key = nn.Linear(n_embd, head_size, bias=False)
            self.query = nn.Linear(n_embd, head_size, bias=False)
            self.value = nn.Linear(n_embd, head_size, bias=False)
            self.register_buffer('tril', lib.tril(lib.ones(block, block)))
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            B, T, C = x.shape
            k, q = self.key(x), self.query(x)
            wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
            wei = wei.masked_fill(self.tril[:T, :T] == 0, float('-inf'))
            wei = self.dropout(F.softmax(wei, dim=-1))
            return wei @ self.value(x)

    class MultiHead(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleList([Head(n_embd // n_head) for _ in range(n_head)])
            self.proj = nn.Linear(n_embd, n_embd)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            return self.dropout(self.proj(lib.cat([h(x) for h in self.heads], dim=-1)))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.sa = MultiHead()
            self.ffwd = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.ReLU(), nn.Linear(4 * n_embd, n_embd),
                                      nn.Dropout(dropout))
            self.ln1, self.ln2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)

        def forward(self, x):
            x = x + self.sa(self.ln1(x))
            return x + self.ffwd(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.token_embedding_table = nn.Embedding(vocab, n_embd)
            self.position_embedding_table = nn.Embedding(block, n_embd)
            self.blocks = nn.Sequential(*[Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, vocab)

        def forward(self, idx, targets):
            B, T = idx.shape
            x = self.token_embedding_table(idx) + self.position_embedding_table(lib.arange(T))
            logits = self.lm_head(self.ln_f(self.blocks(x)))
            loss = F.cross_entropy(logits.view(B * T, -1), targets.view(B * T))
            return logits, loss
    return GPT()


def test_tiny_gpt_matches_torch():
    t, e = build(torch), build(ember)
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 65, (4, 8))
    tgt = rng.integers(0, 65, (4, 8))
    compare_module(t, e, [idx, tgt], atol=2e-5)


def test_tiny_gpt_trains_like_torch():
    """Three SGD steps (written out, so only nn is under test): same losses and weights as torch."""
    t, e = build(torch), build(ember)
    from test_nn_util import copy_state, e2n
    copy_state(t, e)
    rng = np.random.default_rng(1)
    idx, tgt = rng.integers(0, 65, (4, 8)), rng.integers(0, 65, (4, 8))
    losses = {}
    for lib, m in ((torch, t), (ember, e)):
        out = []
        for _ in range(3):
            _, loss = m(lib.from_numpy(idx), lib.from_numpy(tgt))
            m.zero_grad()
            loss.backward()
            with lib.no_grad():
                for p in m.parameters():
                    p.sub_(p.grad * 0.5)
            out.append(float(loss))
        losses[lib.__name__] = out
    np.testing.assert_allclose(losses['ember'], losses['torch'], rtol=1e-4)
    assert losses['ember'][-1] < losses['ember'][0]
    for (n, a), (_, b) in zip(e.named_parameters(), t.named_parameters()):
        np.testing.assert_allclose(e2n(a), b.detach().numpy(), atol=1e-4, err_msg=n)
