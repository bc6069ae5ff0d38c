#!/usr/bin/env bash
# Usage: scripts/check_free_disk.sh DIR GIB WHAT
# Exits 1 with a message naming WHAT when the filesystem holding DIR (or its nearest
# existing parent) has less than GIB GiB free. The venv setups call it before pip
# downloads torch, whose CUDA wheels need several GiB: failing here says how much is
# needed instead of pip's "No space left on device" halfway through an install.
set -euo pipefail
dir="$1" need_gib="$2" what="$3"
while [[ ! -d "${dir}" ]]; do dir="$(dirname "${dir}")"; done
free_kib="$(df -Pk "${dir}" | awk 'NR == 2 { print $4 }')"
free_gib=$((free_kib / 1024 / 1024))
if ((free_gib < need_gib)); then
  echo "error: ${what} needs about ${need_gib} GiB free on the filesystem of ${dir}; ${free_gib} GiB are free" >&2
  exit 1
fi
