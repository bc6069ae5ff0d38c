#!/usr/bin/env bash
# Installs the system packages tpuc builds and tests with (Debian 12), idempotently:
# LLVM/MLIR 22 (static MLIR libraries for melior, FileCheck and lit for the lit tests).
# Packages already installed are not touched; apt runs only when something is missing.
set -euo pipefail

PACKAGES=(
  llvm-22-dev libmlir-22-dev mlir-22-tools libclang1-22 libclang-common-22-dev
  libpolly-22-dev libzstd-dev zlib1g-dev g++ python3
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup_system: LLVM/MLIR 22 packages already installed"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "setup_system: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi

echo "setup_system: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
