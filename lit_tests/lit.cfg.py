# -*- Python -*-
# lit configuration for tpuc's FileCheck tests (see README.md in this directory).
#
#   /usr/lib/llvm-22/bin/lit -v lit_tests
#   /usr/lib/llvm-22/bin/lit -v lit_tests --param tpuc_bin_dir=/path/to/dir/with/tpuc

import os
import shutil

import lit.formats

config.name = "tpuc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
# Inputs/ holds modules that RUN lines read; they are not tests themselves.
config.excludes = ["Inputs", "README.md", "lit.cfg.py"]

config.test_source_root = os.path.dirname(os.path.abspath(__file__))
repo_root = os.path.dirname(config.test_source_root)
# Keep lit's Output/ directories out of the source tree (target/ is git-ignored).
config.test_exec_root = os.path.join(repo_root, "target", "lit-tests")

# --- tpuc ------------------------------------------------------------------------
tpuc_bin_dir = lit_config.params.get(
    "tpuc_bin_dir", os.path.join(repo_root, "target", "debug")
)
tpuc_bin_dir = os.path.abspath(tpuc_bin_dir)
tpuc = os.path.join(tpuc_bin_dir, "tpuc")
if not (os.path.isfile(tpuc) and os.access(tpuc, os.X_OK)):
    lit_config.fatal(
        "tpuc binary not found at '%s'; build it first (cargo build -p tpuc-cli) "
        "or pass --param tpuc_bin_dir=DIR" % tpuc
    )

# --- LLVM tools (FileCheck, not) -------------------------------------------------
llvm_bin_dir = os.path.abspath(
    lit_config.params.get("llvm_bin_dir", "/usr/lib/llvm-22/bin")
)
for tool in ("FileCheck", "not"):
    if not os.access(os.path.join(llvm_bin_dir, tool), os.X_OK):
        lit_config.fatal(
            "'%s' not found in '%s'; install LLVM 22 or pass --param llvm_bin_dir=DIR"
            % (tool, llvm_bin_dir)
        )

path = os.pathsep.join([tpuc_bin_dir, llvm_bin_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
config.environment["PATH"] = path
# tpuc's error messages must not depend on the user's environment.
config.environment["RUST_BACKTRACE"] = "0"
