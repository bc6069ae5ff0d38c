"""The sharding planner's child (`auto_shard=True`): libtpu's compile of one candidate
plan for a TPU slice, `main(["ARTIFACT", "--passes", P, "--topology", T, ...])` run in a
child Python (`python -m tpuc._plan_measure ARTIFACT ...` by hand). It prints the candidate's figures as JSON on stdout, its
progress as `plan: ` lines and a failure as an `error: ` line on stderr. The planner
runs each candidate in a child so that an abort inside XLA's partitioner costs that
candidate, not the user's interpreter."""

from __future__ import annotations

import argparse
import sys

from . import _tpuc


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tpuc._plan_measure")
    parser.add_argument("artifact")
    parser.add_argument("--passes", type=float, default=1.0)
    parser.add_argument("--topology")
    parser.add_argument("--devices", type=int)
    parser.add_argument("--libtpu")
    parser.add_argument("--plugin")
    args = parser.parse_args(argv)
    if args.topology is None:
        print("error: the Python package plans for TPU slices only (give --topology)", file=sys.stderr)
        return 2
    try:
        measured = _tpuc.plan_measure(args.artifact, args.topology, args.passes, args.libtpu)
    except Exception as e:  # noqa: BLE001 - the planner reads the message
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(measured)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
