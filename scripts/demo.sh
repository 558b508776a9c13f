#!/usr/bin/env bash
# npm run demo: install, build the release addon, run the offline demos.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
npx napi build --platform --release --esm
node examples/repair-demo.mjs
node examples/chat-demo.mjs
