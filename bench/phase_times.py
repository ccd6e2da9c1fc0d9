"""Median ms of forward, backward and optimizer step of one bench_train.py case.

    python bench/phase_times.py ember|torch [mlp|cnn|gpt]
"""
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from bench_train import build
lib = __import__(sys.argv[1])
case = sys.argv[2] if len(sys.argv) > 2 else 'mlp'
model, opt, loss_fn = build(lib, case)
def tm(f, n=50):
    ts = []
    for _ in range(n):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    ts.sort(); return ts[len(ts)//2] * 1e3
for _ in range(5):
    l = loss_fn(); opt.zero_grad(); l.backward(); opt.step()
state = {}
def fwd(): state['l'] = loss_fn()
def bwd(): opt.zero_grad(); state['l'].backward()
res = {'fwd': [], 'bwd': [], 'opt': []}
for _ in range(40 if case != 'gpt' else 10):
    for k, f in (('fwd', fwd), ('bwd', bwd), ('opt', opt.step)):
        t = time.perf_counter(); f(); res[k].append(time.perf_counter() - t)
for k, v in res.items():
    v.sort(); print(k, round(v[len(v)//2]*1e3, 3), 'ms')
