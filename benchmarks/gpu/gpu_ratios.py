#!/usr/bin/env python3
"""gpu_ratios.py BENCHMARKS.jsonl: the GPU targets' ratios from one gpu-check run's benchmark
lines (tessera_gpu_benchmark, gpu_torch_peer.py, gpu_cublas_peer.cu, gpu_bare_launch.cu; one
JSON object per line), then every measurement. A ratio whose two sides were not both measured
says so. Run by scripts/gpu-check.sh; standard library only."""
import json
import sys


def main(path):
    r = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                d = json.loads(line)
                r[d["name"]] = d

    def t(n):
        return r[n]["seconds_per_iter"] if n in r else None

    def bw(n):
        return r[n]["gb_per_s"] if n in r else None

    rows = [
        ("add 64M float32 / device copy bandwidth (target >= 0.85)",
         bw("add_out_float32_64M"), bw("copy_float32_64M"), lambda a, b: a / b),
        ("torch.add / Tessera add.out time, 64M float32 (target >= 1.0)",
         t("torch_add_out_float32_64M"), t("add_out_float32_64M"), lambda a, b: a / b),
        ("1-element add.out minus a bare launch, us (target <= 2)",
         t("add_out_float32_1"), t("bare_launch_add_float32_1"), lambda a, b: (a - b) * 1e6),
        ("1-element add (functional) minus a bare launch, us",
         t("add_float32_1"), t("bare_launch_add_float32_1"), lambda a, b: (a - b) * 1e6),
        ("torch 1-element add.out (Python) / Tessera's (C++)",
         t("torch_add_out_float32_1"), t("add_out_float32_1"), lambda a, b: a / b),
        ("cuBLAS / Tessera mm.out time, 4096^2 float32 (target >= 0.9)",
         t("cublas_mm_float32_4096"), t("mm_out_float32_4096"), lambda a, b: a / b),
        ("cuBLAS / Tessera mm.out time, 4096^2 bfloat16 (target >= 0.9)",
         t("cublas_mm_bfloat16_4096"), t("mm_out_bfloat16_4096"), lambda a, b: a / b),
        ("torch.mm / Tessera mm.out time, 4096^2 float32",
         t("torch_mm_out_float32_4096"), t("mm_out_float32_4096"), lambda a, b: a / b),
        ("torch.mm / Tessera mm.out time, 4096^2 bfloat16",
         t("torch_mm_out_bfloat16_4096"), t("mm_out_bfloat16_4096"), lambda a, b: a / b),
        ("torch.softmax / Tessera _softmax time, [8192, 4096] bfloat16 (target >= 1.0)",
         t("torch_softmax_bfloat16_8192x4096"), t("softmax_bfloat16_8192x4096"),
         lambda a, b: a / b),
        ("torch layer_norm / Tessera native_layer_norm time, [8192, 4096] bfloat16 "
         "(target >= 1.0)",
         t("torch_layer_norm_bfloat16_8192x4096"), t("layer_norm_bfloat16_8192x4096"),
         lambda a, b: a / b),
    ]
    for name, a, b, f in rows:
        value = f"{f(a, b):.3f}" if a is not None and b is not None else "not measured"
        print(f"{name}: {value}")
    for name in sorted(r):
        d = r[name]
        extra = f", {d['gb_per_s']:.1f} GB/s" if d.get("gb_per_s") else ""
        print(f"  {name}: {d['seconds_per_iter'] * 1e6:.2f} us/iter{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
