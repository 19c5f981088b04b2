#!/usr/bin/env python3
"""Issue 11's speed targets as ratios against their peers, measured in alternating runs.

Each target compares a Tessera benchmark with a peer benchmark (libtorch, a plain loop, a direct
dnnl_sgemm call, the same kernel body called directly). On a shared machine a single run of
each is at the mercy of its neighbours: a bandwidth figure moved by 30 % between two runs a
minute apart on the 2-core dev machine. So every round runs both sides of every pair back to
back, in alternating order (Tessera first in even rounds, the peer first in odd ones), each as
the best of --reps repetitions; a round's ratio compares two figures taken seconds apart, and
the table gives the range of the rounds' ratios, not one lucky or unlucky pair.

  python3 benchmarks/peer_ratios.py --build build                 # 1 and 2 threads, 5 rounds
  python3 benchmarks/peer_ratios.py --build build --threads 1 --only add,add_

The whole-model pairs need their models' files (--models; written on first use by
benchmarks/models/bench_models.py, which needs PyTorch and torchvision).

Thread counts: TESSERA_NUM_THREADS and OMP_NUM_THREADS (libtorch's and oneDNN's pools) are set
to the same value for both sides. Times are real time. Pairs whose benchmarks the build lacks
(the libtorch peers without libtorch-dev) are listed as not measured, with the reason.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

# name, binary, tessera benchmark, peer benchmark, how they compare, target, thread counts
#   "time": Tessera's time / the peer's (lower is better); "bandwidth": Tessera's bytes per
#   second / the peer's (higher is better); "overhead": Tessera's time - the peer's, in ns;
#   "overhead_per_item": the same per item the benchmarks count (items_per_second), in ns;
#   "scaling": the benchmark's time on 1 thread / its time on t threads (higher is better).
PAIRS = [
    ("add", "tessera_cpu_plugin_benchmark", "BM_TesseraAdd1", "BM_TorchAdd1", "time",
     "<= 0.25x libtorch", (1,)),
    ("add_", "tessera_cpu_plugin_benchmark", "BM_TesseraAddInplace1", "BM_TorchAddInplace1",
     "time", "<= 0.25x libtorch", (1,)),
    ("add_stack", "tessera_cpu_plugin_benchmark", "BM_TesseraAdd1Stack", "BM_TorchAdd1", "time",
     "<= 0.4x libtorch", (1,)),
    ("dispatch", "tessera_dispatch_benchmark", "BM_DispatchedAdd1Element", "BM_DirectAdd1Element",
     "overhead", "<= 40 ns over a direct call", (1,)),
    ("add16M", "tessera_cpu_plugin_benchmark", "BM_TesseraAddOut16M/real_time",
     "BM_PlainLoopAdd16M/real_time", "bandwidth", ">= 0.9x a plain loop", (1, 2)),
    ("sum16M", "tessera_cpu_plugin_benchmark", "BM_TesseraSum16M/real_time",
     "BM_TorchSum16M/real_time", "bandwidth", ">= 1.0x libtorch", (1, 2)),
    ("onednn_glue", "tessera_cpu_plugin_benchmark", "BM_TesseraBmmSmall", "BM_DnnlMatmulSmall",
     "overhead", "<= 1000 ns over the primitive", (1,)),
    ("mm1024", "tessera_cpu_plugin_benchmark", "BM_TesseraMm1024/real_time",
     "BM_DnnlSgemm1024/real_time", "time_inverse", ">= 0.95x dnnl_sgemm", (1, 2)),
    # A compiled model's replay (the models issue): 1,000 chained 1-element adds, against the
    # kernels' own work and against the same calls made eagerly (model_benchmark.cc).
    ("replay", "tessera_model_benchmark", "BM_ModelReplay_AddChain", "BM_KernelWork_AddChain",
     "overhead_per_item", "<= 50 ns per node over the kernels' work", (1, 2)),
    ("replay_eager", "tessera_model_benchmark", "BM_ModelReplay_AddChain", "BM_Eager_AddChain",
     "time", "<= 1.0x the calls made eagerly", (1, 2)),
] + [
    # Whole models (the CPU-speed issue): a compiled model against libtorch running the same
    # traced program, same weights and inputs (model_peer_benchmark.cc; --models).
    (model, "tessera_model_peer_benchmark", "BM_TesseraModel/%s/real_time" % model,
     "BM_TorchModel/%s/real_time" % model, "time", target, (1, 2))
    for model, target in [("resnet18_b1", "<= 0.8x libtorch"), ("resnet18_b8", "<= 0.8x libtorch"),
                          ("mobilenet_v3_small_b1", "<= 0.8x libtorch"),
                          ("mobilenet_v3_small_b8", "<= 0.8x libtorch"),
                          ("bert_b1", "<= 0.8x libtorch"), ("bert_b8", "<= 0.8x libtorch"),
                          ("gpt2_h768", "<= 0.6x libtorch"), ("gpt2_h96", "<= 0.7x libtorch")]
]
MODEL_BINARY = "tessera_model_peer_benchmark"
# The math functions against libtorch (throughput: libtorch's time / Tessera's; softmax as time,
# Tessera's / libtorch's), and the
# scaling targets: a benchmark at 2 threads against itself at 1 ("scaling": time at 1 thread /
# time at 2).
PAIRS += [
    ("gelu1M", "tessera_cpu_math_benchmark", "BM_TesseraGelu1M/none/real_time",
     "BM_TorchGelu1M/none/real_time", "time_inverse", ">= 1.0x libtorch", (1, 2)),
    ("gelu_tanh1M", "tessera_cpu_math_benchmark", "BM_TesseraGelu1M/tanh/real_time",
     "BM_TorchGelu1M/tanh/real_time", "time_inverse", ">= 1.0x libtorch", (1, 2)),
    ("exp1M", "tessera_cpu_math_benchmark", "BM_TesseraUnary1M/exp/real_time",
     "BM_TorchExp1M/real_time", "time_inverse", ">= 1.0x libtorch", (1, 2)),
    ("tanh1M", "tessera_cpu_math_benchmark", "BM_TesseraUnary1M/tanh/real_time",
     "BM_TorchTanh1M/real_time", "time_inverse", ">= 1.0x libtorch", (1, 2)),
    ("log1M", "tessera_cpu_math_benchmark", "BM_TesseraLog1M/real_time",
     "BM_TorchLog1M/real_time", "time_inverse", ">= 1.0x libtorch", (1, 2)),
    ("softmax_attn", "tessera_cpu_math_benchmark", "BM_TesseraSoftmax/768/32/real_time",
     "BM_TorchSoftmax/768/32/real_time", "time", "<= 1.0x libtorch", (1, 2)),
    ("softmax1024", "tessera_cpu_math_benchmark", "BM_TesseraSoftmax/1024/1024/real_time",
     "BM_TorchSoftmax/1024/1024/real_time", "time", "<= 1.0x libtorch", (1, 2)),
] + [
    ("scale_" + name, "tessera_cpu_math_benchmark", bench, bench, "scaling",
     ">= 1.8x one thread", (2,))
    for name, bench in [("add1M", "BM_TesseraAdd1M/real_time"),
                        ("relu_1M", "BM_TesseraRelu_1M/real_time"),
                        ("batch_norm1M", "BM_TesseraBatchNorm1M/real_time"),
                        ("layer_norm1M", "BM_TesseraLayerNorm1M/real_time")]
]


def listed(binary):
    out = subprocess.run([binary, "--benchmark_list_tests"], capture_output=True, text=True,
                         check=True).stdout
    return set(out.split())


def best(binary, name, threads, reps, min_time):
    """The best repetition of benchmark `name`: (real time in ns, bytes per second or None,
    items per second or None)."""
    env = dict(os.environ, TESSERA_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    # The JSON goes to a file of its own: the runtime may log to stdout.
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run(
            [binary, "--benchmark_filter=^%s$" % name, "--benchmark_repetitions=%d" % reps,
             "--benchmark_min_time=%g" % min_time, "--benchmark_out=" + out.name,
             "--benchmark_out_format=json"],
            capture_output=True, text=True, env=env, check=True)
        report = json.load(out)
    runs = [b for b in report["benchmarks"] if b.get("run_type") == "iteration"]
    if not runs:
        raise RuntimeError("%s ran no %s" % (binary, name))
    scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
    fastest = min(runs, key=lambda b: b["real_time"] * scale[b["time_unit"]])
    return (fastest["real_time"] * scale[fastest["time_unit"]], fastest.get("bytes_per_second"),
            fastest.get("items_per_second"))


def ratio(kind, tessera, peer):
    if kind == "time":
        return tessera[0] / peer[0]
    if kind in ("time_inverse", "scaling"):  # a throughput ratio: the peer's time / Tessera's
        return peer[0] / tessera[0]
    if kind == "bandwidth":
        return tessera[1] / peer[1]
    if kind == "overhead_per_item":
        return 1e9 / tessera[2] - 1e9 / peer[2]
    return tessera[0] - peer[0]  # overhead, ns


def show(kind, value):
    return "%.0f ns" % value if kind.startswith("overhead") else "%.2fx" % value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build", help="the build directory (default: build)")
    parser.add_argument("--threads", default="1,2", help="thread counts (default: 1,2)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per pair (default: 5)")
    parser.add_argument("--reps", type=int, default=5, help="repetitions per run (default: 5)")
    parser.add_argument("--min-time", type=float, default=0.1,
                        help="seconds per repetition (default: 0.1)")
    parser.add_argument("--only", help="comma-separated pair names: " +
                        ", ".join(p[0] for p in PAIRS))
    parser.add_argument("--models", help="where the whole-model pairs' files are (default: "
                        "BUILD/bench_models, written by benchmarks/models/bench_models.py with "
                        "$TESSERA_PYTHON or /usr/bin/python3 when missing)")
    args = parser.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    only = set(args.only.split(",")) if args.only else None
    if only and not only <= {p[0] for p in PAIRS}:
        sys.exit("peer_ratios: --only expected names among %s, got %s" %
                 (", ".join(p[0] for p in PAIRS), args.only))
    wanted = [p for p in PAIRS if not only or p[0] in only]
    if any(p[1] == MODEL_BINARY for p in wanted):
        models = args.models or os.path.join(args.build, "bench_models")
        os.environ["TESSERA_BENCH_MODELS"] = models
        names = [p[0] for p in wanted if p[1] == MODEL_BINARY]
        if not all(os.path.exists(os.path.join(models, n + ".pt")) for n in names):
            python = os.environ.get("TESSERA_PYTHON", "/usr/bin/python3")
            here = os.path.dirname(os.path.abspath(__file__))
            subprocess.run([python, os.path.join(here, "models", "bench_models.py"), models] +
                           names, check=True)
    lists = {}
    print("| target | threads | Tessera (best) | peer (best) | ratio per round | target |")
    print("|---|---|---|---|---|---|")
    for name, binary, ours, peer, kind, target, counts in PAIRS:
        if only and name not in only:
            continue
        path = os.path.join(args.build, "bin", binary)
        if path not in lists:
            lists[path] = listed(path) if os.path.exists(path) else set()
        missing = [b for b in (ours, peer) if b not in lists[path]]
        if missing:
            print("| %s | | | | not measured: %s lacks %s | %s |" %
                  (name, binary, ", ".join(missing), target))
            continue
        for t in (c for c in counts if c in threads):
            rounds, ours_best, peer_best = [], None, None
            for r in range(args.rounds):
                order = [(ours, "ours"), (peer, "peer")]
                if r % 2:
                    order.reverse()
                got = {}
                for bench, side in order:
                    # "scaling": the peer is the same benchmark on one thread.
                    threads_for = 1 if kind == "scaling" and side == "peer" else t
                    got[side] = best(path, bench, threads_for, args.reps, args.min_time)
                rounds.append(ratio(kind, got["ours"], got["peer"]))
                if ours_best is None or got["ours"][0] < ours_best[0]:
                    ours_best = got["ours"]
                if peer_best is None or got["peer"][0] < peer_best[0]:
                    peer_best = got["peer"]
            def figure(b):
                if kind == "bandwidth":
                    return "%.1f GB/s" % (b[1] / 1e9)
                if kind == "overhead_per_item":
                    return "%.0f ns per node" % (1e9 / b[2])
                return "%.0f ns" % b[0] if b[0] < 1e5 else "%.2f ms" % (b[0] / 1e6)
            print("| %s | %d | %s | %s | %s-%s (median %s) | %s |" %
                  (name, t, figure(ours_best), figure(peer_best), show(kind, min(rounds)),
                   show(kind, max(rounds)), show(kind, statistics.median(rounds)), target),
                  flush=True)


if __name__ == "__main__":
    main()
