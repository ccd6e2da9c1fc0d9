"""The main job: train a character-level GPT on Tiny Shakespeare, the PyTorch way.

Written exactly as one writes it for PyTorch (``import ember as torch``):
a nanoGPT-sized model (4 layers, 4 heads, 128 wide, block 64), AdamW, a
cosine learning-rate schedule, periodic validation, a checkpoint, a loss
curve and a text sample. ``ember demo --minutes 3`` runs it; ``--steps``
bounds it by steps instead.
"""
import argparse
import math
import os
import sys
import time

import ember as torch
import ember.nn as nn
import ember.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, dropout):
        super().__init__()
        self.n_head = n_head
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.dropout = dropout

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           dropout_p=self.dropout if self.training else 0.0)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, n_embd, n_head, dropout):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, dropout)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd),
                                 nn.Dropout(dropout))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class CharGPT(nn.Module):
    def __init__(self, vocab_size, block_size=64, n_layer=4, n_head=4, n_embd=128, dropout=0.0):
        super().__init__()
        self.block_size = block_size
        self.tok_emb = nn.Embedding(vocab_size, n_embd)
        self.pos_emb = nn.Embedding(block_size, n_embd)
        self.blocks = nn.ModuleList([Block(n_embd, n_head, dropout) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        pos = torch.arange(T, device=idx.device)
        x = self.tok_emb(idx) + self.pos_emb(pos)
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
        for _ in range(max_new_tokens):
            cond = idx[:, -self.block_size:]
            logits, _ = self(cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits = logits.masked_fill(logits < v[:, [-1]], float('-inf'))
            probs = F.softmax(logits, dim=-1)
            nxt = torch.multinomial(probs, num_samples=1, generator=generator)
            idx = torch.cat((idx, nxt), dim=1)
        return idx


class CharData:
    """The text as int64 tensors of character ids, split 90/10 into train and validation."""

    def __init__(self, text):
        self.chars = sorted(set(text))
        self.stoi = {c: i for i, c in enumerate(self.chars)}
        data = torch.tensor([self.stoi[c] for c in text], dtype=torch.long)
        n = int(0.9 * len(data))
        self.train, self.val = data[:n], data[n:]

    def encode(self, s):
        return [self.stoi[c] for c in s]

    def decode(self, ids):
        return ''.join(self.chars[i] for i in ids)

    def batch(self, split, batch_size, block_size, generator=None):
        data = self.train if split == 'train' else self.val
        ix = torch.randint(len(data) - block_size - 1, (batch_size,), generator=generator)
        x = torch.stack([data[i:i + block_size] for i in ix.tolist()])
        y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix.tolist()])
        return x, y


@torch.no_grad()
def estimate_loss(model, data, batch_size, block_size, iters, generator):
    model.eval()
    out = {}
    for split in ('train', 'val'):
        losses = [model(*data.batch(split, batch_size, block_size, generator))[1].item() for _ in range(iters)]
        out[split] = sum(losses) / len(losses)
    model.train()
    return out


def _progress(total, enabled):
    try:
        if not enabled:
            raise ImportError
        from tqdm import tqdm
        return tqdm(total=total, unit='step', dynamic_ncols=True)
    except ImportError:
        return _PlainProgress(total)


class _PlainProgress:
    """Fallback when tqdm is absent: a line every 10% of the run."""

    def __init__(self, total):
        self.total, self.n, self.next_pct, self.postfix = total, 0, 10, ''

    def update(self, k=1):
        self.n += k
        if self.total and 100 * self.n // self.total >= self.next_pct:
            print(f'  {self.n}/{self.total} steps {self.postfix}', flush=True)
            self.next_pct += 10

    def set_postfix_str(self, s):
        self.postfix = s

    def write(self, s):
        print(s, flush=True)

    def close(self):
        pass


def save_loss_curve(history, path):
    """A PNG of train/val loss against step (matplotlib, the 'plot' extra); returns False without it."""
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    steps = [h[0] for h in history]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(steps, [h[1] for h in history], label='train')
    ax.plot(steps, [h[2] for h in history], label='val')
    ax.set_xlabel('step')
    ax.set_ylabel('cross-entropy loss')
    ax.set_title('ember char-GPT on Tiny Shakespeare')
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def train(minutes=3.0, max_steps=None, out_dir='ember_demo_out', batch_size=16, block_size=64, n_layer=4,
          n_head=4, n_embd=128, lr=3e-3, eval_every=100, eval_iters=10, seed=1337, progress=True,
          sample_chars=300, text=None):
    """Train the char-GPT; returns a dict with the final losses and paths written."""
    from .data import tinyshakespeare
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    data = CharData(text if text is not None else tinyshakespeare())
    model = CharGPT(len(data.chars), block_size, n_layer, n_head, n_embd)
    n_params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.99), weight_decay=0.1)
    budget = minutes * 60.0
    total = max_steps or 100000
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 50))
    print(f'ember char-GPT: {n_params / 1e6:.2f}M parameters, vocab {len(data.chars)}, '
          f'{n_layer} layers x {n_head} heads x {n_embd}, block {block_size}, batch {batch_size}', flush=True)
    bar = _progress(max_steps if max_steps else None, progress)
    history, t0, step = [], time.time(), 0
    while step < total and (max_steps is not None or time.time() - t0 < budget):
        x, y = data.batch('train', batch_size, block_size, g)
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        step += 1
        bar.update(1)
        bar.set_postfix_str(f'loss {loss.item():.3f}')
        if step % eval_every == 0:
            losses = estimate_loss(model, data, batch_size, block_size, eval_iters, g)
            history.append((step, losses['train'], losses['val']))
            bar.write(f'step {step:5d}  train {losses["train"]:.4f}  val {losses["val"]:.4f}  '
                      f'({time.time() - t0:.0f}s)')
    bar.close()
    elapsed = time.time() - t0
    losses = estimate_loss(model, data, batch_size, block_size, eval_iters * 2, g)
    history.append((step, losses['train'], losses['val']))
    os.makedirs(out_dir, exist_ok=True)
    ckpt = os.path.join(out_dir, 'char_gpt.pt')
    torch.save({'model': model.state_dict(), 'optimizer': opt.state_dict(), 'chars': data.chars,
                'config': dict(block_size=block_size, n_layer=n_layer, n_head=n_head, n_embd=n_embd),
                'step': step}, ckpt)
    png = os.path.join(out_dir, 'loss_curve.png')
    plotted = save_loss_curve(history, png)
    start = torch.tensor([data.encode('\n')], dtype=torch.long)
    sample = data.decode(model.generate(start, sample_chars, temperature=0.8, top_k=20, generator=g)[0].tolist())
    print(f'\n{step} steps in {elapsed:.0f}s ({step / max(elapsed, 1e-9):.2f} steps/s); '
          f'final train loss {losses["train"]:.4f}, val loss {losses["val"]:.4f}')
    print(f'checkpoint: {ckpt}')
    print(f'loss curve: {png}' if plotted else 'loss curve: skipped (install the "plot" extra for matplotlib)')
    print('--- sample ---\n' + sample + '\n--------------')
    return dict(steps=step, train_loss=losses['train'], val_loss=losses['val'], checkpoint=ckpt,
                loss_curve=png if plotted else None, sample=sample, seconds=elapsed)


def main(argv=None):
    ap = argparse.ArgumentParser(prog='ember demo', description=__doc__.splitlines()[0])
    ap.add_argument('--minutes', type=float, default=3.0, help='training time budget (default 3)')
    ap.add_argument('--steps', type=int, default=None, help='train for this many steps instead of a time budget')
    ap.add_argument('--out', default='ember_demo_out', help='folder for the checkpoint and loss curve')
    ap.add_argument('--no-progress', action='store_true', help='plain progress lines instead of a tqdm bar')
    a = ap.parse_args(argv)
    train(minutes=a.minutes, max_steps=a.steps, out_dir=a.out, progress=not a.no_progress)
    return 0


if __name__ == '__main__':
    sys.exit(main())
