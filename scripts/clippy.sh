#!/usr/bin/env bash
# cargo clippy with one retry for a flake seen on these machines: cargo's first probe of
# clippy-driver (`rustc - --print=...`) sometimes fails, reading compiler diagnostics as
# its source ("failed to run `rustc` to learn about target-specific information"), and
# cargo caches that failure in <target-dir>/.rustc_info.json. Run on its own the same
# probe succeeds. The retry drops the cached probe and runs clippy again; any other
# failure is reported as is.
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
cargo clippy "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ] && grep -q "to learn about target-specific information" "$log"; then
  echo "clippy.sh: cargo's rustc probe failed (a known flake); retrying once without its cache" >&2
  rm -f "$target_dir/.rustc_info.json"
  cargo clippy "$@"
  status=$?
fi
exit "$status"
