#!/bin/bash
# The GPU checks in one go (on a machine with CuPy, torch with CUDA, pytest-xdist and pytest-timeout):
#   bash tests_cuda/run.sh OUTDIR [SECONDS_FOR_THE_OPERATOR_SWEEP] [PROFILED_FUNCTIONS] [EXAMPLES_CHECKOUT]
# writes OUTDIR/bench.log, api.log, ops.log, failures.txt and fallbacks.jsonl; with PROFILED_FUNCTIONS (N), the
# benchmark also prints the N functions where ember's training steps spend their host time (bench_cuda --profile);
# with a pytorch/examples checkout, its GPU programs run under torch and ember on the GPU (corpus.py --accel).
OUT=${1:-/tmp/ember_cuda}; SWEEP=${2:-300}; PROFILE=${3:-0}; EXAMPLES=${4:-}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$(cd "$(dirname "$0")/.." && pwd)
nvidia-smi -L
python -c "import cupy, numpy, torch; print('cupy', cupy.__version__, 'numpy', numpy.__version__, 'torch', torch.__version__)"
export EMBER_FAILURE_LOG=$OUT/failures.txt EMBER_FALLBACK_REPORT=$OUT/fallbacks.jsonl
timeout 120 python -m pytest tests_cuda/test_cuda_api.py -q -p no:cacheprovider --timeout 100 2>&1 | tee "$OUT/api.log" | tail -40
timeout 150 python bench/bench_cuda.py --seconds 1 --profile "$PROFILE" 2>&1 | tee "$OUT/bench.log"
timeout "$SWEEP" python -m pytest tests_cuda/test_cuda_ops.py -n 8 -q -p no:cacheprovider --timeout 120 --tb=no 2>&1 \
    | tee "$OUT/ops.log" | tail -5
if [ -f "$OUT/failures.txt" ]; then
    echo "failures: $(wc -l < "$OUT/failures.txt")"
    cut -c1-160 "$OUT/failures.txt" | head -40
else
    echo "failures: 0"
fi
if [ -n "$EXAMPLES" ]; then
    timeout 150 python bench/corpus.py "$EXAMPLES" --accel --timeout 50 -v --only mnist vae mnist_rnn dcgan \
        'word_language_model[LSTM]' 'word_language_model[Transformer]' > "$OUT/corpus.log" 2>&1
    grep -E "^(PASS|FAIL)|passed" "$OUT/corpus.log"
fi
