#!/usr/bin/env python3
"""Seed corpora for the fuzz targets, from the committed test data (stdlib only).

  make_seeds.py OUT_DIR TPUC_BIN

writes OUT_DIR/pt2_archive (small .pt2 archives), OUT_DIR/exported_program_json (their
model.json files and one op-suite case per overload) and OUT_DIR/artifact (manifests,
safetensors and .npy files of artifacts compiled with TPUC_BIN, each prefixed with the
target's kind byte). Existing files are kept: libFuzzer adds what it finds there.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_ARCHIVE = 48 * 1024


def small_archives():
    for root in ("testdata/models", "testdata/stateful"):
        base = os.path.join(REPO, root)
        for name in sorted(os.listdir(base)):
            for form in ("exported", "core"):
                p = os.path.join(base, name, f"{form}.pt2")
                if os.path.exists(p) and os.path.getsize(p) <= MAX_ARCHIVE:
                    yield f"{name}-{form}", p


def main(out, tpuc):
    dirs = {t: os.path.join(out, t) for t in ("pt2_archive", "exported_program_json", "artifact")}
    for d in dirs.values():
        os.makedirs(d, exist_ok=True)
    for tag, path in small_archives():
        shutil.copy(path, os.path.join(dirs["pt2_archive"], f"{tag}.pt2"))
        with zipfile.ZipFile(path) as z:
            name = next(n for n in z.namelist() if n.endswith("/models/model.json"))
            with open(os.path.join(dirs["exported_program_json"], f"{tag}.json"), "wb") as f:
                f.write(z.read(name))
    cases = os.path.join(REPO, "testdata/ops/cases")
    for op in sorted(os.listdir(cases)):
        first = sorted(os.listdir(os.path.join(cases, op)))[0]
        src = os.path.join(cases, op, first, "model.json")
        if os.path.exists(src):
            shutil.copy(src, os.path.join(dirs["exported_program_json"], f"op-{op}.json"))
    with tempfile.TemporaryDirectory() as tmp:
        for model in ("mlp", "int_ops", "mlp_bf16", "indexing"):
            art = os.path.join(tmp, f"{model}.tpuc")
            src = os.path.join(REPO, "testdata/models", model, "exported.pt2")
            subprocess.run([tpuc, "compile", src, "-o", art], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            files = [(0, os.path.join(art, "manifest.json")), (1, os.path.join(art, "weights.safetensors"))]
            inputs = os.path.join(REPO, "testdata/models", model, "inputs")
            files += [(2, os.path.join(inputs, f)) for f in sorted(os.listdir(inputs))]
            for i, (kind, path) in enumerate(files):
                with open(path, "rb") as f:
                    data = bytes([kind]) + f.read()
                with open(os.path.join(dirs["artifact"], f"{model}-{i}"), "wb") as f:
                    f.write(data)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
