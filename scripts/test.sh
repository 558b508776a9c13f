#!/usr/bin/env bash
# Runs every test: cargo's (the napi-free core), then the release addon build, then vitest.
# Ends with one plain line "total: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
log=$(mktemp)
rc=0
cargo test --locked 2>&1 | tee "$log" || rc=1
cargo_passed=$(grep -Eo 'test result: [a-zA-Z]+\. [0-9]+ passed' "$log" | awk '{s+=$4} END {print s+0}')
cargo_failed=$(grep -Eo '[0-9]+ failed;' "$log" | awk '{s+=$1} END {print s+0}')
if [ -z "${PI_NATIVE_SKIP_BUILD:-}" ]; then
  npx napi build --platform --release --esm || { echo "total: $cargo_passed passed, $((cargo_failed + 1)) failed"; exit 1; }
fi
npx vitest run --reporter=default --reporter=json --outputFile.json=.vitest-results.json || rc=1
read -r v_passed v_failed < <(node -e '
  try { const r = require("./.vitest-results.json"); console.log(r.numPassedTests, r.numFailedTests + (r.numTotalTests ? 0 : 1)) }
  catch { console.log(0, 1) }')
[ "$v_failed" = 0 ] || rc=1
rm -f "$log"
echo "total: $((cargo_passed + v_passed)) passed, $((cargo_failed + v_failed)) failed"
exit $rc
