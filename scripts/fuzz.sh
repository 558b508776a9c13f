#!/usr/bin/env bash
# Coverage-guided fuzzing of the core's parsers with cargo-fuzz (see fuzz/README.md).
#
#   npm run fuzz                          every target for 60 s
#   npm run fuzz -- --time 300 json sse   the named targets for 300 s each
#   npm run fuzz -- --runs 1000000        every target for 1,000,000 executions
#   npm run fuzz -- --no-build ...        reuse the fuzz binaries already built
#
# Environment: FUZZ_TIME / FUZZ_RUNS (as the flags), FUZZ_MAX_LEN (input bound, default 65536),
# FUZZ_ARGS (extra libFuzzer flags). Targets run one after another on one core; the seeds in
# fuzz/corpus/<target> are read, new inputs go to fuzz/corpus-run/<target> (not committed), crashes
# to fuzz/artifacts/<target>. Ends with one line per target: executions, time, coverage, result.
set -uo pipefail
cd "$(dirname "$0")/.."

all_targets=(sse stream json envelope grammar schema pipeline)
time_s="${FUZZ_TIME:-60}"
runs="${FUZZ_RUNS:-}"
max_len="${FUZZ_MAX_LEN:-65536}"
build=1
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --time) time_s="$2"; runs=""; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz: unknown option $1 (see --help)" >&2; exit 2 ;;
    *)
      if [[ " ${all_targets[*]} " != *" $1 "* ]]; then
        echo "fuzz: unknown target $1 (targets: ${all_targets[*]})" >&2
        exit 2
      fi
      targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")

# cargo-fuzz needs a nightly toolchain (for -Zsanitizer and the coverage instrumentation).
if ! command -v cargo >/dev/null 2>&1; then
  echo "fuzz: cargo not found. Install Rust from https://rustup.rs, then:" >&2
  echo "  rustup toolchain install nightly && cargo install cargo-fuzz --locked" >&2
  exit 1
fi
if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz: no nightly toolchain. Install it with:  rustup toolchain install nightly" >&2
  exit 1
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "fuzz: cargo-fuzz is not installed. Install it with:  cargo install cargo-fuzz --locked" >&2
  exit 1
fi

if [ -n "$runs" ]; then
  budget=(-runs="$runs")
  what="$runs executions"
else
  budget=(-max_total_time="$time_s")
  what="${time_s} s"
fi

root="$PWD/fuzz"
host=$(rustc +nightly -vV | sed -n 's/^host: //p')
bin="$root/target/$host/release"
if [ "$build" = 1 ]; then
  echo "fuzz: building the targets"
  # cargo-fuzz's default build: optimised, debug assertions and overflow checks on, AddressSanitizer.
  if ! cargo +nightly fuzz build; then
    echo "fuzz: the fuzz build failed" >&2
    exit 1
  fi
fi
logs="$root/corpus-run/logs"
mkdir -p "$logs"
summary=()
failed=0
for t in "${targets[@]}"; do
  mkdir -p "$root/corpus-run/$t" "$root/artifacts/$t"
  dict=()
  [ -f "$root/dict/$t.dict" ] && dict=(-dict="$root/dict/$t.dict")
  echo "fuzz: $t for $what"
  if [ ! -x "$bin/$t" ]; then
    echo "fuzz: $bin/$t is missing (run without --no-build)" >&2
    exit 1
  fi
  # New inputs land in the first corpus directory; the committed seeds are only read.
  # shellcheck disable=SC2086 # FUZZ_ARGS is a list of flags
  "$bin/$t" "$root/corpus-run/$t" "$root/corpus/$t" -artifact_prefix="$root/artifacts/$t/" \
    "${budget[@]}" -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=10 -max_len="$max_len" \
    -print_final_stats=1 "${dict[@]}" ${FUZZ_ARGS:-} 2>&1 | tee "$logs/$t.log"
  rc=${PIPESTATUS[0]}
  execs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$logs/$t.log" | tail -1 | grep -Eo '[0-9]+$')
  secs=$(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$logs/$t.log" | tail -1 | grep -Eo 'in [0-9]+' | grep -Eo '[0-9]+')
  cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$logs/$t.log" | tail -1)
  if [ "$rc" = 0 ]; then
    result=ok
  else
    result="FAILED (exit $rc, see fuzz/artifacts/$t and fuzz/corpus-run/logs/$t.log)"
    failed=1
  fi
  summary+=("$(printf '%-9s %12s execs %6s s  %-22s %s' "$t" "${execs:-?}" "${secs:-?}" "${cov:-cov: ?}" "$result")")
done

echo
echo "fuzz summary:"
printf '  %s\n' "${summary[@]}"
exit "$failed"
