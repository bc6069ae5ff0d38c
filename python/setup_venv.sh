#!/usr/bin/env bash
# Creates the Python environment the tpuc package is built and tested in:
#   <repo>/.deps/python-venv  with maturin (builds the wheel), pytest, numpy, and what
#   the tests compare against: torch 2.15, transformers 5.24, torchvision, and the CPU
#   PJRT plugin wheel the package depends on.
# Idempotent: does nothing when the venv already has them.
#
# The interpreter is $PYTHON_VENV_PYTHON if set, else python3 (>= 3.10: the package is
# abi3 for CPython 3.10 and newer).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${repo_root}/.deps/python-venv"
python="${PYTHON_VENV_PYTHON:-python3}"
SPECS=(maturin==1.16.* pytest numpy "torch==2.15.0" "transformers==5.24.0" torchvision
  "lammps-jax-pjrt-cpu==0.11.2" ml_dtypes)

have() {
  "${venv}/bin/python" - <<'PY' 2>/dev/null
import importlib.metadata as md, sys
want = {"maturin": "1.16", "pytest": "", "torch": "2.15.0", "transformers": "5.24.0",
        "torchvision": "", "lammps-jax-pjrt-cpu": "0.11.2", "ml_dtypes": ""}
sys.exit(not all(md.version(p).startswith(v) for p, v in want.items()))
PY
}

if [[ -x "${venv}/bin/python" ]] && have; then
  exit 0
fi
if ! "${python}" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  echo "python/setup_venv.sh: ${python} is not Python >= 3.10 (set PYTHON_VENV_PYTHON)" >&2
  exit 1
fi
if [[ ! -x "${venv}/bin/python" ]]; then
  echo "python/setup_venv.sh: creating ${venv} with $("${python}" --version)"
  mkdir -p "$(dirname "${venv}")"
  "${python}" -m venv "${venv}"
fi
bash "${repo_root}/scripts/check_free_disk.sh" "${venv}" 8 "python/setup_venv.sh (torch with its CUDA wheels)"
echo "python/setup_venv.sh: installing ${SPECS[*]} (torch is large: minutes the first time)"
# --no-cache-dir: pip's cache would keep a second copy of the multi-GiB torch wheels.
"${venv}/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir "${SPECS[@]}"
