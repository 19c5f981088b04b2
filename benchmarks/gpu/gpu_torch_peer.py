#!/usr/bin/env python3
"""PyTorch's CUDA ops on the workloads of tessera_gpu_benchmark (same sizes, same timing: N
iterations between two synchronizations), one JSON object per line. Run by scripts/gpu-check.sh
in the same device call, so that the ratios compare one machine at one moment."""
import json
import sys
import time

import torch


def timed(fn, warmup, iters):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / iters


def report(name, seconds, nbytes):
    print(json.dumps({"name": name, "seconds_per_iter": seconds,
                      "gb_per_s": nbytes / seconds / 1e9 if nbytes else 0.0}), flush=True)


def main():
    device = sys.argv[1] if len(sys.argv) > 1 else "cuda:0"
    if not torch.cuda.is_available():
        print("gpu_torch_peer.py: torch sees no CUDA device", file=sys.stderr)
        return 77
    n = 64 << 20
    a = torch.full((n,), 1.5, device=device)
    b = torch.full((n,), 2.5, device=device)
    c = torch.empty(n, device=device)
    nbytes = n * 4
    report("torch_copy_float32_64M", timed(lambda: c.copy_(a), 3, 50), 2 * nbytes)
    report("torch_add_out_float32_64M", timed(lambda: torch.add(a, b, out=c), 3, 50), 3 * nbytes)
    report("torch_add_float32_64M", timed(lambda: a + b, 3, 50), 3 * nbytes)
    x = torch.empty(1, device=device)
    y = torch.empty(1, device=device)
    z = torch.empty(1, device=device)
    report("torch_add_out_float32_1", timed(lambda: torch.add(x, y, out=z), 1000, 20000), 0)
    report("torch_add_float32_1", timed(lambda: x + y, 1000, 20000), 0)

    # mm 4096^2 into out (cuBLAS; TF32 off, PyTorch's default, as Tessera's float32 products).
    torch.backends.cuda.matmul.allow_tf32 = False
    m = 4096
    for dtype, name in ((torch.float32, "float32"), (torch.bfloat16, "bfloat16")):
        p = torch.full((m, m), 0.01, dtype=dtype, device=device)
        q = torch.full((m, m), 0.02, dtype=dtype, device=device)
        r = torch.empty((m, m), dtype=dtype, device=device)
        report(f"torch_mm_out_{name}_4096", timed(lambda: torch.mm(p, q, out=r), 3, 20), 0)

    rows, cols = 8192, 4096
    row_bytes = rows * cols * 2
    h = torch.full((rows, cols), 0.5, dtype=torch.bfloat16, device=device)
    weight = torch.ones(cols, dtype=torch.bfloat16, device=device)
    bias = torch.zeros(cols, dtype=torch.bfloat16, device=device)
    report("torch_softmax_bfloat16_8192x4096",
           timed(lambda: torch.softmax(h, -1), 3, 100), 2 * row_bytes)
    report("torch_layer_norm_bfloat16_8192x4096",
           timed(lambda: torch.nn.functional.layer_norm(h, (cols,), weight, bias, 1e-5), 3, 100),
           2 * row_bytes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
