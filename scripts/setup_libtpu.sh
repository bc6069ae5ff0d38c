#!/usr/bin/env bash
# Installs libtpu, the TPU compiler and PJRT plugin that `tpuc compile --target tpu`
# compiles with (no TPU needed: it compiles for a named topology):
#   <repo>/.deps/libtpu/libtpu.so
# Idempotent: does nothing when the library is already there.
#
# Source: PyPI `libtpu==0.0.52` (PJRT C API 0.117, StableHLO 1.24.0), the one wheel
# pinned below by its SHA-256. Downloaded with `pip download --no-deps` for the wheel's
# own platform and Python tags (libtpu.so does not depend on the Python it ships with),
# checked, and unpacked with Python's zipfile.
set -euo pipefail

PACKAGE="libtpu"
VERSION="0.0.52"
WHEEL="libtpu-0.0.52-cp311-cp311-manylinux_2_31_x86_64.whl"
SHA256="f5e2e596eaea9357fbb5a6755a7a9007c6ab75bfde4a55191b03eff402971140"
MEMBER="libtpu/libtpu.so"

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest_dir="${repo_root}/.deps/libtpu"
dest="${dest_dir}/libtpu.so"

if [[ -f "${dest}" ]]; then
  echo "setup_libtpu: ${dest} already present, nothing to do"
  exit 0
fi
if [[ "$(uname -m)" != "x86_64" ]]; then
  echo "setup_libtpu: libtpu ships for x86_64 Linux only; skipped (TPU compiles unavailable here)"
  exit 0
fi

PYTHON="${PYTHON:-python3}"
if ! command -v "${PYTHON}" >/dev/null 2>&1; then
  echo "setup_libtpu: ${PYTHON} not found (needed to download and unpack libtpu)" >&2
  exit 1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT

echo "setup_libtpu: downloading ${PACKAGE}==${VERSION} (about 137 MB) into ${tmp}"
"${PYTHON}" -m pip download --quiet --no-deps --disable-pip-version-check \
  --only-binary=:all: --implementation cp --python-version 3.11 \
  --platform manylinux_2_31_x86_64 "${PACKAGE}==${VERSION}" -d "${tmp}"

wheel="${tmp}/${WHEEL}"
if [[ ! -f "${wheel}" ]]; then
  echo "setup_libtpu: pip download did not produce ${WHEEL} in ${tmp}" >&2
  exit 1
fi
got="$(sha256sum "${wheel}" | cut -d' ' -f1)"
if [[ "${got}" != "${SHA256}" ]]; then
  echo "setup_libtpu: ${WHEEL} has SHA-256 ${got}, expected ${SHA256}; not installed" >&2
  exit 1
fi

mkdir -p "${dest_dir}"
echo "setup_libtpu: extracting ${MEMBER} (about 470 MB) from ${WHEEL}"
# A temporary name first and a rename, so an interrupted run never leaves a truncated
# library that a later run would take as installed.
"${PYTHON}" - "${wheel}" "${MEMBER}" "${dest}.partial" <<'PY'
import shutil
import sys
import zipfile

wheel, member, out = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z:
    with z.open(z.getinfo(member)) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
PY
chmod 0755 "${dest}.partial"
mv -f "${dest}.partial" "${dest}"
echo "setup_libtpu: installed ${dest} ($(du -h "${dest}" | cut -f1))"
