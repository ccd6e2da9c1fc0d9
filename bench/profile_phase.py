"""cProfile of the forward or the backward only of one bench_train.py case (tottime order).

    python bench/profile_phase.py cnn fwd|bwd [rows]
"""
import os, sys, cProfile, pstats
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from bench_train import build
import ember as lib
case, phase = sys.argv[1], sys.argv[2]
model, opt, loss_fn = build(lib, case)
for _ in range(3):
    l = loss_fn(); opt.zero_grad(); l.backward(); opt.step()
pr = cProfile.Profile()
for _ in range(5):
    if phase == 'fwd': pr.enable()
    l = loss_fn()
    if phase == 'fwd': pr.disable()
    opt.zero_grad()
    if phase == 'bwd': pr.enable()
    l.backward()
    if phase == 'bwd': pr.disable()
    opt.step()
pstats.Stats(pr).sort_stats('tottime').print_stats(int(sys.argv[3]) if len(sys.argv) > 3 else 30)
