"""tessera-run's .npy inputs and outputs, with NumPy on the other side.

    python3 npy_check.py TESSERA_RUN MODEL.tsrm WORK_DIR

Takes the model's first example input out of its file (a safetensors file) into a .npy with
NumPy, runs `tessera-run --input NAME=FILE.npy --save-outputs DIR`, and compares each saved
output with the file's expected output as assert_close's float32 defaults do. Then the refusals:
an input of the wrong dtype, a Fortran-order array, a big-endian one, an input name the model
lacks. Exit 0 when all hold.
"""

import json
import os
import struct
import subprocess
import sys

import numpy as np

DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "I64": np.int64,
          "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_}


def read_tensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    graph = json.loads(header["__metadata__"]["graph"])
    tensors = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        tensors[name] = np.frombuffer(data[b:end], DTYPES[e["dtype"]]).reshape(e["shape"])
    return graph, tensors


def run(tessera_run, *args):
    return subprocess.run([tessera_run, *args], capture_output=True, text=True)


def main(tessera_run, model, work):
    os.makedirs(work, exist_ok=True)
    graph, tensors = read_tensors(model)
    name = graph["inputs"][0]["name"]
    x = tensors[f"input/{name}"]
    np.save(os.path.join(work, "x.npy"), x)
    out_dir = os.path.join(work, "out")
    os.makedirs(out_dir, exist_ok=True)
    r = run(tessera_run, model, "--input", f"{name}={work}/x.npy", "--save-outputs", out_dir)
    if r.returncode != 0:
        sys.exit(f"FAIL: tessera-run --input/--save-outputs exited {r.returncode}: {r.stderr}")
    for out in graph["outputs"]:
        got = np.load(os.path.join(out_dir, out["name"] + ".npy"))
        want = tensors[f"expected/{out['name']}"]
        if got.dtype != want.dtype or got.shape != want.shape:
            sys.exit(f"FAIL: {out['name']}: saved {got.dtype} {got.shape}, expected "
                     f"{want.dtype} {want.shape}")
        if not np.allclose(got, want, rtol=1.3e-6, atol=1e-5, equal_nan=True):
            sys.exit(f"FAIL: {out['name']}: saved values differ from PyTorch's")
    print(f"ok: {os.path.basename(model)}: .npy in and out agree with PyTorch")

    refusals = [
        ("wrong dtype", x.astype(np.float64), "expected float32"),
        ("fortran order", np.asfortranarray(x) if x.ndim > 1 else None, "Fortran-order"),
        ("big endian", x.astype(">f4"), "dtype '>f4'"),
    ]
    for what, array, message in refusals:
        if array is None:
            continue
        path = os.path.join(work, "bad.npy")
        np.save(path, array)
        r = run(tessera_run, model, "--input", f"{name}={path}")
        if r.returncode != 1 or message not in r.stderr:
            sys.exit(f"FAIL: {what}: expected exit 1 with '{message}', got {r.returncode}: "
                     f"{r.stderr}")
        print(f"ok: {what} refused: {r.stderr.strip()}")
    r = run(tessera_run, model, "--input", f"nope={work}/x.npy")
    if r.returncode != 2 or "the model has no input of that name" not in r.stderr:
        sys.exit(f"FAIL: an unknown input name: got {r.returncode}: {r.stderr}")
    print("ok: an unknown input name refused")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
