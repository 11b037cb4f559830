#!/usr/bin/env bash
# The long run of the property-based fuzzers (tests/unit/test_fuzz_*.py): rounds of
# EXAMPLES examples per fuzzer, each round with a fresh random seed (printed, so a round
# can be run again), until MINUTES have passed; then each fuzzer's examples and failures
# summed over the rounds. Failures found are kept in .hypothesis/ and tried first by the
# next run (and by a plain pytest run of the fuzzer).
#
#   scripts/fuzz.sh [MINUTES] [EXAMPLES]        default: 10 (whole) minutes, 300 examples a round
#   scripts/fuzz.sh 10 300 -k h2                pytest arguments after the two numbers
#
# The suite runs the same fuzzers with 25 examples each, derandomized (tests/unit/fuzzing.py).
set -uo pipefail
cd "$(dirname "$0")/.."

minutes=${1:-10}
examples=${2:-300}
shift $(($# < 2 ? $# : 2))
python=${PYTHON:-.venv/bin/python}
logs=$(mktemp -d "${TMPDIR:-/tmp}/netbench-fuzz.XXXXXX")
deadline=$(($(date +%s) + ${minutes%%.*} * 60))  # whole minutes
started=$(date +%s)

echo "fuzzing for $minutes min, $examples examples a fuzzer a round; logs in $logs"
round=0
while [ "$(date +%s)" -lt "$deadline" ]; do
  round=$((round + 1))
  seed=$((RANDOM * 32768 + RANDOM))
  left=$((deadline - $(date +%s)))
  # A round that runs far past the deadline is cut (its figures lost); 5 min of grace.
  NETBENCH_FUZZ_EXAMPLES=$examples timeout --signal=INT $((left + 300)) \
    "$python" -m pytest tests/unit/test_fuzz_*.py -q -p no:cacheprovider \
    --hypothesis-show-statistics --hypothesis-seed="$seed" "$@" >"$logs/round-$round.log" 2>&1
  status=$?
  summary=$(grep -E "^[0-9]+ (passed|failed)|^=+ .*(passed|failed)" "$logs/round-$round.log" | tail -1)
  echo "round $round (seed $seed, exit $status, $(($(date +%s) - started)) s in): $summary"
done

echo
echo "fuzzer  examples  failing  (summed over $round rounds, $(($(date +%s) - started)) s)"
awk '
  /^tests\/unit\/test_fuzz_.*::.*:$/ { name = substr($1, 12, length($1) - 12) }
  / passing, .* failing/ {
    for (i = 1; i <= NF; i++) {
      if ($(i + 1) ~ /^passing/) passing[name] += $i
      if ($(i + 1) ~ /^failing/) failing[name] += $i
    }
  }
  END { for (n in passing) printf "%-88s %8d %4d\n", n, passing[n], failing[n] }
' "$logs"/round-*.log | sort | tee "$logs/figures.txt"
awk '{ total += $2; bad += $3 } END { printf "%-88s %8d %4d\n", "all", total, bad }' "$logs/figures.txt"
failed=$(grep -h "^FAILED" "$logs"/round-*.log | sort | uniq -c)
if [ -n "$failed" ]; then
  echo
  echo "failed (see $logs):"
  echo "$failed"
  exit 1
fi
