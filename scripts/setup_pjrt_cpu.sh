#!/usr/bin/env bash
# Installs the CPU PJRT plugin that tpuc's runtime tests execute programs with:
#   <repo>/.deps/pjrt/pjrt_c_api_cpu_plugin.so
# Idempotent: does nothing when the plugin is already there.
#
# Source: PyPI `lammps-jax-pjrt-cpu==0.11.2` (Apache-2.0; the XLA CPU plugin of jaxlib
# 0.11.2, PJRT C API 0.115, StableHLO 1.20.0). Downloaded with `pip download --no-deps`
# (its metadata pins jax, which we do not want) and unpacked with Python's zipfile, so
# the only tools needed are python3 and pip.
set -euo pipefail

PACKAGE="lammps-jax-pjrt-cpu"
VERSION="0.11.2"
MEMBER="lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so"

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest_dir="${repo_root}/.deps/pjrt"
dest="${dest_dir}/pjrt_c_api_cpu_plugin.so"

if [[ -f "${dest}" ]]; then
  echo "setup_pjrt_cpu: ${dest} already present, nothing to do"
  exit 0
fi

PYTHON="${PYTHON:-python3}"
if ! command -v "${PYTHON}" >/dev/null 2>&1; then
  echo "setup_pjrt_cpu: ${PYTHON} not found (needed to download and unpack the plugin)" >&2
  exit 1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT

echo "setup_pjrt_cpu: downloading ${PACKAGE}==${VERSION} (about 63 MB) into ${tmp}"
"${PYTHON}" -m pip download --quiet --no-deps --disable-pip-version-check \
  "${PACKAGE}==${VERSION}" -d "${tmp}"

wheel="$(find "${tmp}" -maxdepth 1 -name '*.whl' -print -quit)"
if [[ -z "${wheel}" ]]; then
  echo "setup_pjrt_cpu: pip download produced no wheel in ${tmp}" >&2
  exit 1
fi

mkdir -p "${dest_dir}"
echo "setup_pjrt_cpu: extracting ${MEMBER} from $(basename "${wheel}")"
# Write to a temporary name first and rename, so an interrupted run never leaves a
# truncated plugin behind that a later run would take as installed.
"${PYTHON}" - "${wheel}" "${MEMBER}" "${dest}.partial" <<'PY'
import shutil
import sys
import zipfile

wheel, member, out = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z:
    try:
        info = z.getinfo(member)
    except KeyError:
        sys.exit(f"setup_pjrt_cpu: {member} not found in {wheel}")
    with z.open(info) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
PY
chmod 0755 "${dest}.partial"
mv -f "${dest}.partial" "${dest}"
echo "setup_pjrt_cpu: installed ${dest} ($(du -h "${dest}" | cut -f1))"
