#!/usr/bin/env python3
"""Fingerprints everything `tpuc compile` emits for the committed test programs.

Restructuring the compiler must not change a single byte it writes. This script runs one
`tpuc` binary over every program under testdata/ (corpus models in both forms, coverage
models, op cases, control-flow, stateful, decode and dynamic programs) with the targets,
optimization levels, sharding strategies and options the tests use, and writes one line
per compile: the job, the exit status and a SHA-256 of each file written (an artifact's
files, or the text of `--emit mlir`). Two listings, one from the commit before a change
and one after, are compared with `diff`; `make check-identical BASE=<rev>` does both.

    scripts/check_identical.py --tpuc target/debug/tpuc --out after.txt

Only the Python standard library is used (no torch); run from the repository root.
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SHARDING = [
    ("dp=2", "data-parallel"),
    ("tp=2", "megatron"),
    ("dp=2,tp=2", "data-parallel,megatron"),
    ("fsdp=4", "fsdp"),
]


def programs(root: Path, pattern: str) -> list:
    return sorted(str(p.relative_to(root)) for p in root.glob(pattern))


def coverage_decoders(root: Path) -> list:
    index = json.loads((root / "testdata/coverage/models/index.json").read_text())
    return [
        m["name"] for m in index["models"] if m.get("family") in ("decoder", "moe")
    ]


def jobs(root: Path, quick: bool) -> list:
    """(key, args, emits_text) for every compile to fingerprint."""
    out = []
    model_sources = (
        programs(root, "testdata/models/*/*.pt2")
        + programs(root, "testdata/models/*/core_double_batch.json")
        + programs(root, "testdata/coverage/models/*/*.pt2")
        + programs(root, "testdata/control_flow/*/*.pt2")
        + programs(root, "testdata/stateful/*/*.pt2")
        + programs(root, "testdata/decode/*/*.pt2")
        + programs(root, "testdata/dynamic/*/*.pt2")
    )
    ops = programs(root, "testdata/ops/cases/*/*/model.json") + programs(
        root, "testdata/ops/exported/cases/*/*/model.json"
    )
    if quick:
        model_sources = model_sources[::7]
        ops = ops[::25]
    for src in model_sources:
        out.append((f"{src} artifact", [src], False))
        for level in ("0", "1", "2"):
            out.append((f"{src} mlir -O{level}", [src, f"-O{level}", "--emit", "mlir"], True))
        out.append((f"{src} artifact trn2", [src, "--target", "trn2"], False))
        out.append((f"{src} mlir trn2 -O1", [src, "--target", "trn2", "-O1", "--emit", "mlir"], True))
    for src in ops:
        out.append((f"{src} artifact", [src], False))
        out.append((f"{src} artifact trn2", [src, "--target", "trn2"], False))
        out.append((f"{src} mlir -O0", [src, "-O0", "--emit", "mlir"], True))
    sharded = programs(root, "testdata/models/*/*.pt2") + [
        f"testdata/coverage/models/{name}/{form}.pt2"
        for name in coverage_decoders(root)
        for form in ("exported", "core")
    ]
    sharded += programs(root, "testdata/decode/*/*.pt2")
    if quick:
        sharded = sharded[::9]
    for src in sharded:
        for mesh, shard in SHARDING:
            for fmt in ("shardy", "gspmd"):
                args = [src, "--mesh", mesh, "--shard", shard, "--sharding-format", fmt]
                out.append((f"{src} artifact mesh={mesh} shard={shard} {fmt}", args, False))
        out.append((f"{src} mlir mesh=tp=2 megatron", [src, "--mesh", "tp=2", "--shard", "megatron", "--emit", "mlir"], True))
    for src in programs(root, "testdata/models/llama/*.pt2"):
        out.append((
            f"{src} artifact rules",
            [src, "--mesh", "tp=2", "--sharding-rules", "testdata/sharding/llama_megatron.rules"],
            False,
        ))
    for src in programs(root, "testdata/models/*/exported.pt2"):
        for precision in ("high", "default"):
            out.append((f"{src} artifact precision={precision}", [src, "--matmul-precision", precision], False))
        out.append((f"{src} artifact trn2 bf16", [src, "--target", "trn2", "--auto-cast", "bf16"], False))
        out.append((f"{src} artifact trn1 keep-int64", [src, "--target", "trn1", "--keep-int64"], False))
        out.append((f"{src} artifact -O1", [src, "-O1"], False))
    for src in programs(root, "testdata/models/*/core.pt2"):
        out.append((f"{src} aten", [src, "--emit", "aten"], True))
    # Dynamic programs: an extra specialization in the artifact, and one size as text.
    for src, spec in dynamic_specializations(root):
        out.append((f"{src} artifact specialize {spec}", [src, "--specialize", spec], False))
        out.append((f"{src} mlir specialize {spec}", [src, "--specialize", spec, "--emit", "mlir"], True))
    return out


def dynamic_specializations(root: Path) -> list:
    """(program, `--specialize` value) per testdata/dynamic program: its last call's sizes,
    each named by the symbol whose range matches the size's dimension in meta.json."""
    out = []
    for meta in sorted(root.glob("testdata/dynamic/*/meta.json")):
        data = json.loads(meta.read_text())
        sizes = data["calls"][-1]["sizes"]
        for form, ranges in sorted(data["range_constraints"].items()):
            spec = []
            for symbol, (low, high) in sorted(ranges.items()):
                dims = [
                    name
                    for name, r in data["dims"].items()
                    if (r["min"], r["max"]) == (low, high) and name in sizes
                ]
                if len(dims) == 1:
                    spec.append(f"{symbol}={sizes[dims[0]]}")
            src = meta.parent / f"{form}.pt2"
            if spec and src.exists():
                out.append((str(src.relative_to(root)), ",".join(spec)))
    return out


def fingerprint(path: Path) -> str:
    if path.is_file():
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    parts = []
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        digest = hashlib.sha256(f.read_bytes()).hexdigest()[:16]
        parts.append(f"{f.relative_to(path)}={digest}")
    return " ".join(parts)


def run_job(tpuc: str, work: Path, index: int, job) -> str:
    key, args, emits_text = job
    dest = work / f"job{index}"
    out = dest.with_suffix(".mlir") if emits_text else dest
    cmd = [tpuc, "compile", *args, "-o", str(out)]
    env = dict(os.environ, TPUC_CACHE_DIR=str(work / "cache"))
    proc = subprocess.run(cmd, capture_output=True, env=env)
    if proc.returncode != 0:
        result = f"rc={proc.returncode}"
    else:
        result = "ok " + fingerprint(out)
    if out.is_dir():
        shutil.rmtree(out, ignore_errors=True)
    elif out.exists():
        out.unlink()
    return f"{key}\t{result}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tpuc", required=True, help="the tpuc binary to fingerprint")
    parser.add_argument("--out", required=True, help="listing to write (one line per compile)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--quick", action="store_true", help="a sample of every kind of job")
    args = parser.parse_args()
    root = Path.cwd()
    if not (root / "testdata").is_dir():
        print("error: run from the repository root", file=sys.stderr)
        return 2
    tpuc = str(Path(args.tpuc).resolve())
    todo = jobs(root, args.quick)
    print(f"check_identical: {len(todo)} compiles with {tpuc}", file=sys.stderr)
    lines = [None] * len(todo)
    with tempfile.TemporaryDirectory(prefix="tpuc-identical-") as tmp:
        work = Path(tmp)
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {
                pool.submit(run_job, tpuc, work, i, job): i for i, job in enumerate(todo)
            }
            for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
                lines[futures[future]] = future.result()
                if done % 500 == 0:
                    print(f"check_identical: {done}/{len(todo)}", file=sys.stderr)
    Path(args.out).write_text("\n".join(lines) + "\n")
    failed = sum(1 for line in lines if "\trc=" in line)
    print(f"check_identical: wrote {args.out} ({failed} refused)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
