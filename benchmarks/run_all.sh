#!/usr/bin/env bash
# Run every netbench benchmark once, in sequence (about 10 minutes). Not part of CI.
# CPU per request against wrk takes 10 trials per server: its run-to-run spread is part of
# the figure (median [min .. max]), and three trials hide how far it can move.
# Usage: benchmarks/run_all.sh [--quick]   (--quick: one trial each, shorter runs)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3}"
if [[ "${1:-}" == "--quick" ]]; then
    vs_wrk=(--trials 1 --duration 3)
    latency=(--trials 1 --duration 3)
    open_loop=(--trials 1 --rate-duration 5 --co-duration 3)
    idle=(--trials 1)
else
    vs_wrk=(--trials 10 --duration 4 --other-loops --bare)
    latency=(--trials 3 --duration 5)
    open_loop=(--trials 3)
    idle=(--trials 3)
fi
"$python" "$here/bench_vs_wrk.py" "${vs_wrk[@]}"
if command -v go >/dev/null; then
    "$python" "$here/bench_vs_wrk.py" --trials "${vs_wrk[1]}" --duration "${vs_wrk[3]}" --server go
    # Marginal CPU per request, every response different and the same bytes, vs wrk.
    if [[ "${1:-}" == "--quick" ]]; then
        "$python" "$here/bench_marginal_cpu.py" --rounds 1 --short 1 --long 3 --rows vary,hello
    else
        "$python" "$here/bench_marginal_cpu.py" --rounds 5 --rows vary,hello
    fi
else
    echo "(go not found: skipping bench_vs_wrk.py --server go and bench_marginal_cpu.py)"
fi
"$python" "$here/bench_latency.py" "${latency[@]}"
"$python" "$here/bench_open_loop.py" "${open_loop[@]}"
"$python" "$here/bench_idle_rss.py" "${idle[@]}"
