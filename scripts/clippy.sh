#!/usr/bin/env bash
# cargo clippy with one retry for a flake seen on these machines: cargo's first probe of
# clippy-driver (`rustc - --print=...`) sometimes fails, reading compiler diagnostics as
# its source ("failed to run `rustc` to learn about target-specific information"), and
# cargo caches that failure in <target-dir>/.rustc_info.json. Run on its own the same
# probe succeeds. Each retry drops the cached probe and runs clippy again (five
# attempts in all); any other failure is reported as is.
#
#   scripts/clippy.sh [--target-dir DIR] CLIPPY_ARGS...
set -uo pipefail
target_dir=target
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  if [ "${args[$i]}" = "--target-dir" ]; then target_dir=${args[$((i + 1))]}; fi
done
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for attempt in 1 2 3 4 5; do
  cargo clippy "$@" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  if [ "$status" -eq 0 ] || ! grep -q "to learn about target-specific information" "$log"; then
    exit "$status"
  fi
  echo "clippy.sh: cargo's rustc probe failed (attempt $attempt; a known flake here); retrying without its cache" >&2
  rm -f "$target_dir/.rustc_info.json"
  sleep 3
done
exit "$status"
