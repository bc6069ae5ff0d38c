#!/usr/bin/env bash
# Creates the Python environment `make bench` runs its peers in:
#   <repo>/.deps/bench-venv  with jax 0.12 (which pulls jaxlib, its CPU backend included),
#   torch 2.15 (the version testdata was exported with) and torchax 0.0.13, the peer that
#   exports the same .pt2 files through JAX; transformers 5.24, optax and safetensors for
#   the training-step rows (the models of testdata/training, the JAX step's optimizer).
# Idempotent: does nothing when the venv already has those versions.
#
# jax/jaxlib 0.12 need Python >= 3.12. The interpreter is $BENCH_PYTHON if set, else the
# newest pyenv 3.12 (then 3.13), else python3.12 / python3.13 on PATH.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${repo_root}/.deps/bench-venv"
JAX_SPEC="${JAX_SPEC:-jax==0.12.*}"
TORCH_SPEC="${TORCH_SPEC:-torch==2.15.0}"
TORCHAX_SPEC="${TORCHAX_SPEC:-torchax==0.0.13}"
EXTRA_SPECS=(transformers==5.24.0 "optax==0.2.*" safetensors)

have() {
  "${venv}/bin/python" - <<'PY' 2>/dev/null
import importlib.metadata as md, sys
want = {"jax": "0.12", "torch": "2.15.0", "torchax": "0.0.13", "transformers": "5.24.0",
        "optax": "0.2", "safetensors": ""}
sys.exit(not all(md.version(p).startswith(v) for p, v in want.items()))
PY
}

if [[ -x "${venv}/bin/python" ]] && have; then
  echo "setup_venv: ${venv} has jax, torch and torchax, nothing to do"
  exit 0
fi
if [[ -x "${venv}/bin/python" ]] &&
  "${venv}/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
  echo "setup_venv: adding ${JAX_SPEC} ${TORCH_SPEC} ${TORCHAX_SPEC} to ${venv}"
  "${venv}/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir "${JAX_SPEC}" "${TORCH_SPEC}" "${TORCHAX_SPEC}" "${EXTRA_SPECS[@]}" numpy
  exit 0
fi

python="${BENCH_PYTHON:-}"
if [[ -z "${python}" ]]; then
  pyenv_root="${PYENV_ROOT:-${HOME}/.pyenv}"
  for minor in 3.12 3.13; do
    for v in $(ls -d "${pyenv_root}/versions/${minor}".* 2>/dev/null | sort -V -r); do
      if [[ -x "${v}/bin/python${minor}" ]]; then python="${v}/bin/python${minor}"; break 2; fi
    done
  done
fi
if [[ -z "${python}" ]]; then
  python="$(command -v python3.12 || command -v python3.13 || true)"
fi
if [[ -z "${python}" ]]; then
  echo "setup_venv: jax 0.12 needs Python >= 3.12: none found (set BENCH_PYTHON)" >&2
  exit 1
fi

echo "setup_venv: creating ${venv} with ${python} and installing ${JAX_SPEC} ${TORCH_SPEC} ${TORCHAX_SPEC}"
rm -rf "${venv}"
mkdir -p "$(dirname "${venv}")"
bash "$(dirname "${BASH_SOURCE[0]}")/../scripts/check_free_disk.sh" "${venv}" 8 "bench/setup_venv.sh (jax, torch with its CUDA wheels)"
"${python}" -m venv "${venv}"
"${venv}/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir "${JAX_SPEC}" "${TORCH_SPEC}" "${TORCHAX_SPEC}" "${EXTRA_SPECS[@]}" numpy
echo "setup_venv: installed jax $("${venv}/bin/python" -c 'import jax; print(jax.__version__)')"
