"""The zoo's dynamic-dim models at sizes other than their example's, against PyTorch.

    python3 dynamic_check.py TESSERA_RUN ZOO_DIR [NPU_PLUGIN]

For each *_dynamic model zoo.py exported into ZOO_DIR: builds the same module again (the zoo's
seed, so the same weights), makes inputs at several sizes of its dims with the zoo's own
inputs_at (the smallest, sizes below the exporter's fitted ones, and larger ones), runs PyTorch
and `tessera-run --input ... --save-outputs` on them, and compares every output under
assert_close's float32 defaults; with NPU_PLUGIN, each model's second size on the sample npu
plugin too (its missing kernels through the fallback). Then the refusals: a size outside a dim's range, and two
inputs that disagree on a dim. Exit 0 when all hold.
"""

import os
import shutil
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo  # noqa: E402

SIZES = {
    "bert_layer_dynamic": [{"batch": 1, "seq": 1}, {"batch": 1, "seq": 7}, {"batch": 3, "seq": 17},
                           {"batch": 2, "seq": 128}],
    "gpt2_step_dynamic": [{"past": 1}, {"past": 2}, {"past": 100}, {"past": 1024}],
    "resnet18_dynamic": [{"batch": 1}, {"batch": 3}],
}
# A size outside each model's range, and the error tessera-run must give for it.
OUT_OF_RANGE = {
    "bert_layer_dynamic": ({"batch": 65, "seq": 3}, "gives batch = 65, outside the range the "
                           "model was exported for, [1, 64]"),
    "gpt2_step_dynamic": ({"past": 1025}, "gives past = 1025, outside the range"),
    "resnet18_dynamic": ({"batch": 33}, "gives batch = 33, outside the range"),
}


def run(tessera_run, model, inputs, work, device=()):
    out = os.path.join(work, "out")
    shutil.rmtree(out, ignore_errors=True)  # no output of an earlier size is read back
    os.makedirs(out)
    args = [tessera_run, model, "--save-outputs", out, *device]
    for k, x in enumerate(inputs):
        path = os.path.join(work, f"input{k}.npy")
        np.save(path, x.numpy())
        args += ["--input", f"input{k}={path}"]
    return subprocess.run(args, capture_output=True, text=True)


def main(tessera_run, zoo_dir, npu=None):
    failed = False
    for name, all_sizes in SIZES.items():
        runs = [(sizes, ()) for sizes in all_sizes]
        if npu is not None:
            runs.append((all_sizes[1], ("--plugin", npu, "--device", "npu:0")))
        model = os.path.join(zoo_dir, f"{name}.tsrm")
        work = os.path.join(zoo_dir, f"{name}.dynamic")
        os.makedirs(work, exist_ok=True)
        torch.manual_seed(0)
        net, _, _, inputs_at = zoo.ZOO[name]()
        net.eval()
        for sizes, device in runs:
            where = f"{name} at {sizes}" + (" on npu" if device else "")
            inputs = inputs_at(**sizes)
            with torch.no_grad():
                want = net(*[x.clone() for x in inputs])
            want = list(want) if isinstance(want, (tuple, list)) else [want]
            r = run(tessera_run, model, inputs, work, device)
            if r.returncode != 0:
                print(f"FAIL: {where}: tessera-run exit {r.returncode}: {r.stderr}")
                failed = True
                continue
            saved = sorted(os.listdir(os.path.join(work, "out")))
            if saved != sorted(f"output{k}.npy" for k in range(len(want))):
                print(f"FAIL: {where}: tessera-run saved {saved}, PyTorch has {len(want)} outputs")
                failed = True
                continue
            for k, w in enumerate(want):
                got = torch.from_numpy(np.load(os.path.join(work, "out", f"output{k}.npy")))
                try:
                    torch.testing.assert_close(got, w)
                except AssertionError as e:
                    print(f"FAIL: {where}: output{k}: {e}")
                    failed = True
                    break
            else:
                print(f"ok: {where}: {len(want)} outputs agree with PyTorch")
        sizes, message = OUT_OF_RANGE[name]
        r = run(tessera_run, model, inputs_at(**sizes), work)
        if r.returncode != 1 or message not in r.stderr:
            print(f"FAIL: {name} at {sizes}: expected exit 1 with '{message}', got "
                  f"{r.returncode}: {r.stderr}")
            failed = True
        else:
            print(f"ok: {name} at {sizes} refused: {r.stderr.strip()}")
    # Two inputs that disagree on a dim: BERT's x at seq 5, its mask at seq 6.
    x, _ = zoo.ZOO["bert_layer_dynamic"]()[3](batch=2, seq=5)
    _, mask = zoo.ZOO["bert_layer_dynamic"]()[3](batch=2, seq=6)
    work = os.path.join(zoo_dir, "bert_layer_dynamic.dynamic")
    r = run(tessera_run, os.path.join(zoo_dir, "bert_layer_dynamic.tsrm"), [x, mask], work)
    message = ("input 1 ('input1'): expected sizes [batch, seq], whose axis 1 is 5, got [2, 6] "
               "(batch = 2 from input 0 ('input0') axis 0, seq = 5 from input 0 ('input0') axis 1)")
    if r.returncode != 1 or message not in r.stderr:
        print(f"FAIL: disagreeing inputs: expected exit 1 with '{message}', got {r.returncode}: "
              f"{r.stderr}")
        failed = True
    else:
        print("ok: inputs that disagree on a dim refused")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
