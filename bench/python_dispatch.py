"""The Python package's side of `make bench`'s per-call rows: `program(*tensors)` of the
`tpuc` package on the same artifacts tpuc-bench times from Rust, with torch tensors and
with numpy arrays (inputs read in place, outputs written into new arrays), every call
timed, in rounds.

Input (argv[1]): a JSON spec {"programs": [{"name", "artifact", "inputs": [npy...]}],
"iterations", "rounds", "warmup"}. Prints {"tpuc_version", "python", name: {"torch_ns":
[...], "numpy_ns": [...]}}.
"""

import json
import platform
import sys
import time

import numpy as np
import torch

import tpuc


def timed(call, warmup, iterations, out):
    for _ in range(warmup):
        call()
    for _ in range(iterations):
        start = time.perf_counter_ns()
        call()
        out.append(time.perf_counter_ns() - start)


def main():
    spec = json.load(open(sys.argv[1]))
    torch.set_num_threads(1)
    result = {"tpuc_version": tpuc.__version__, "python": platform.python_version()}
    for p in spec["programs"]:
        program = tpuc.load(p["artifact"], cache=False)
        arrays = [np.load(f) for f in p["inputs"]]
        tensors = [torch.from_numpy(a) for a in arrays]
        samples = {"torch_ns": [], "numpy_ns": []}
        for _ in range(spec["rounds"]):
            timed(lambda: program(*tensors), spec["warmup"], spec["iterations"], samples["torch_ns"])
            timed(lambda: program(*arrays), spec["warmup"], spec["iterations"], samples["numpy_ns"])
        result[p["name"]] = samples
    print(json.dumps(result))


if __name__ == "__main__":
    main()
