#!/usr/bin/env bash
# scripts/gpu-check.sh [BUNDLE.tar.xz]: the GPU backend's checks on a machine with an NVIDIA GPU,
# nvcc, CMake, Ninja and PyTorch with CUDA but none of Debian's packages, in one run (one call
# of the device tool; docs/gpu_backends.md, "On a GPU machine"):
#   1. unpack the bundle that scripts/gpu-bundle.sh made (default:
#      build-gpu-bundle/tessera-gpu-bundle.tar.xz) and pick how to run its programs;
#   2. build libtessera_cuda.so from the bundle's headers with this machine's nvcc (timed);
#   3. run the GPU plugin's tests (tessera_gpu_plugin_test, JUnit XML) with the products on
#      cuBLAS where a libcublas is found (PyTorch's wheel ships one; TESSERA_GPU_BLAS=auto), then
#      its matrix-product tests again on our tiled kernel (TESSERA_GPU_BLAS=own), and say which
#      path each run took;
#   4. run its conformance with reports (JSON, JUnit, Markdown), then compute-sanitizer's
#      memcheck on a few ops when compute-sanitizer is there;
#   5. run the benchmarks, Tessera's, PyTorch's CUDA ops, cuBLAS called directly and a bare
#      kernel launch, and print the issue's ratios.
# Results go to $OUT (the device tool's folder) or ./gpu-check-out. Each step has a time limit
# (the device tool allows 600 s per call); a failing step is reported and the others still run.
# Exit status: 0 when every step passed, 1 when one failed, 77 when there is no GPU.
set -uo pipefail

bundle="${1:-build-gpu-bundle/tessera-gpu-bundle.tar.xz}"
results="${OUT:-$PWD/gpu-check-out}"
work="${TMPDIR:-/tmp}/tessera-gpu-check"
mkdir -p "$results"
summary="$results/summary.txt"
: > "$summary"
status=0

log() { printf '[gpu-check] %s\n' "$*" | tee -a "$summary" >&2; }
step() {  # step NAME SECONDS COMMAND...: run, time, log the outcome
  local name="$1" limit="$2" start rc ms
  shift 2
  start=$(date +%s%N)
  timeout --kill-after=10 "$limit" "$@" > "$results/$name.log" 2>&1
  rc=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  log "$name: exit $rc in $((ms / 1000)).$((ms % 1000 / 100)) s (log: $name.log)"
  return $rc
}

if ! command -v nvidia-smi > /dev/null || ! nvidia-smi -L > "$results/gpus.txt" 2>&1; then
  log "no NVIDIA GPU here (nvidia-smi -L failed); nothing to check"
  exit 77
fi
log "GPUs: $(tr '\n' ';' < "$results/gpus.txt")"

# 1. The bundle.
rm -rf "$work"
mkdir -p "$work"
tar -C "$work" -xJf "$bundle" || { log "cannot unpack $bundle"; exit 1; }
prefix="$work/tessera"
log "bundle: $bundle (commit $(cat "$prefix/share/tessera/gpu/commit"))"
deps="$prefix/lib/deps"
system="$prefix/lib/system"
export LD_LIBRARY_PATH="$prefix/lib:$deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Debian 12's binaries need glibc >= 2.36; on an older machine they run under the bundled
# loader and C library (and so does the plugin built here, which then needs nothing newer).
run=()
if ! "$prefix/bin/conformance" --list > /dev/null 2> "$results/loader_probe.log"; then
  run=("$system/ld-linux-x86-64.so.2" --library-path "$prefix/lib:$deps:$system")
  log "this machine's C library is older than Debian 12's: using the bundled one"
fi

# 2. Build the CUDA plugin here, from the installed headers and CMake package.
build="$work/build-cuda"
if step build_plugin 300 env -u LD_LIBRARY_PATH sh -c "cmake -S '$prefix/share/tessera/gpu/src' -B '$build' -G Ninja \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH='$prefix' -DTESSERA_WITH_CUDA=ON \
      -DTESSERA_PLUGIN_MANIFEST=OFF && cmake --build '$build'"; then
  plugin="$build/libtessera_cuda.so"
  cp "$plugin" "$prefix/lib/tessera/plugins/"
  plugin="$prefix/lib/tessera/plugins/libtessera_cuda.so"
  grep -E 'Building CUDA|Linking' "$results/build_plugin.log" >> "$summary"
else
  log "the CUDA plugin did not build; see build_plugin.log"
  exit 1
fi

# The plugin loads cuBLAS at its first product (docs/gpu_backends.md, "The matrix products"): a
# machine with only the driver has none, but PyTorch's CUDA wheel ships libcublas.so.13 (in
# torch/lib or site-packages/nvidia/.../lib). Found, it goes on the library path of the runs that
# should use it; not found, the products run on the tiled kernel and the summary says so.
blas_dir=$(python3 - 2> /dev/null <<'PY'
import glob, os, torch
torch_dir = os.path.dirname(torch.__file__)
site = os.path.dirname(torch_dir)
for pattern in (os.path.join(torch_dir, "lib", "libcublas.so.13*"),
                os.path.join(site, "nvidia", "cublas", "lib", "libcublas.so.13*"),
                os.path.join(site, "nvidia", "**", "libcublas.so.13*")):
    found = sorted(glob.glob(pattern, recursive=True))
    if found:
        print(os.path.dirname(found[0]))
        break
PY
)
if [ -n "$blas_dir" ]; then
  log "cuBLAS for the products: $blas_dir (PyTorch's)"
else
  log "no libcublas.so.13 beside PyTorch: the products use the system's cuBLAS if the loader finds one, else the tiled kernel"
fi
blas_env=(LD_LIBRARY_PATH="$LD_LIBRARY_PATH${blas_dir:+:$blas_dir}")
run_blas=("${run[@]}")
if [ ${#run[@]} -gt 0 ] && [ -n "$blas_dir" ]; then
  run_blas=("$system/ld-linux-x86-64.so.2" --library-path "$prefix/lib:$deps:$system:$blas_dir")
fi
blas_path() {  # blas_path LOG: the plugin's one line on the products' path, or why there is none
  grep -m1 -o 'cuda: matrix products on .*' "$results/$1" || echo "(no product ran: no path logged)"
}

# 3. The plugin's tests (those that need a device run here), products on cuBLAS where found.
step plugin_test 240 env "${blas_env[@]}" TESSERA_LOG_LEVEL=info \
  TESSERA_GPU_TEST_PLUGINS="cuda=$plugin" \
  "${run_blas[@]}" "$prefix/bin/tessera_gpu_plugin_test" --gtest_output="xml:$results/plugin_test.xml" ||
  status=1
grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$results/plugin_test.log" >> "$summary"
log "plugin_test, TESSERA_GPU_BLAS=auto: $(blas_path plugin_test.log)"
# The same products on the tiled kernel (the HIP backend's, and CUDA's without cuBLAS).
step plugin_test_own_gemm 120 env TESSERA_GPU_BLAS=own TESSERA_LOG_LEVEL=info \
  TESSERA_GPU_TEST_PLUGINS="cuda=$plugin" "${run[@]}" "$prefix/bin/tessera_gpu_plugin_test" \
  --gtest_filter='*MatrixProducts*' --gtest_output="xml:$results/plugin_test_own_gemm.xml" ||
  status=1
grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$results/plugin_test_own_gemm.log" >> "$summary"
log "plugin_test_own_gemm, TESSERA_GPU_BLAS=own: $(blas_path plugin_test_own_gemm.log)"
# TESSERA_GPU_BLAS=cublas without PyTorch's directory: an error naming what was searched, unless
# this machine's loader finds a libcublas of its own (then the products pass on it). Reported,
# not judged.
step blas_forced 60 env TESSERA_GPU_BLAS=cublas TESSERA_LOG_LEVEL=info \
  TESSERA_GPU_TEST_PLUGINS="cuda=$plugin" "${run[@]}" "$prefix/bin/tessera_gpu_plugin_test" \
  --gtest_filter='*MatrixProducts*'
log "TESSERA_GPU_BLAS=cublas, no added library path: $(grep -m1 -o 'TESSERA_GPU_BLAS=cublas but.*' \
  "$results/blas_forced.log" || blas_path blas_forced.log)"

# 4. Conformance, with reports; memcheck on a few ops with the direct allocator (every tensor
# its own cudaMalloc, so that an out-of-bounds access is not inside a cached block).
step conformance 420 env "${blas_env[@]}" "${run_blas[@]}" "$prefix/bin/conformance" \
  --plugin "$plugin" --jobs 4 \
  --json "$results/conformance.json" --junit "$results/conformance.xml" \
  --markdown "$results/conformance.md" || status=1
tail -n 25 "$results/conformance.log" >> "$summary"
if command -v compute-sanitizer > /dev/null; then
  step memcheck 240 env "${blas_env[@]}" TESSERA_GPU_ALLOCATOR=direct compute-sanitizer \
    --tool memcheck --error-exitcode 1 "${run_blas[@]}" "$prefix/bin/conformance" --plugin "$plugin" \
    --op '^(add|sub|mul|div|neg|exp|sigmoid|relu|copy_|fill_|mm|bmm|addmm)$' || status=1
  grep -E 'ERROR SUMMARY|Program hit' "$results/memcheck.log" | head -5 >> "$summary"
fi

# 5. Benchmarks: Tessera's, PyTorch's CUDA ops, cuBLAS called directly and a bare launch, in
# this one run. Tessera's products take the cuBLAS path when the plugin finds one (as PyTorch's).
step benchmark 180 env "${blas_env[@]}" TESSERA_LOG_LEVEL=info "${run_blas[@]}" \
  "$prefix/bin/tessera_gpu_benchmark" cuda:0 || status=1
log "benchmark: $(blas_path benchmark.log)"
(unset LD_LIBRARY_PATH; step torch_peer 120 python3 "$prefix/share/tessera/gpu/bench/gpu_torch_peer.py" cuda:0) ||
  status=1
if step bare_launch_build 120 env -u LD_LIBRARY_PATH nvcc -O2 -o "$work/gpu_bare_launch" \
    "$prefix/share/tessera/gpu/bench/gpu_bare_launch.cu"; then
  step bare_launch 60 env -u LD_LIBRARY_PATH "$work/gpu_bare_launch" || status=1
fi
# The cuBLAS peer links the toolkit's cuBLAS, else PyTorch's (then found through an rpath).
peer_src="$prefix/share/tessera/gpu/bench/gpu_cublas_peer.cu"
if step cublas_peer_build 120 env -u LD_LIBRARY_PATH nvcc -O2 -o "$work/gpu_cublas_peer" \
    "$peer_src" -lcublas ||
  { [ -n "$blas_dir" ] && step cublas_peer_build_torch 120 env -u LD_LIBRARY_PATH nvcc -O2 \
      -o "$work/gpu_cublas_peer" "$peer_src" -L"$blas_dir" -l:libcublas.so.13 \
      -Xlinker -rpath="$blas_dir"; }; then
  step cublas_peer 120 env -u LD_LIBRARY_PATH "$work/gpu_cublas_peer" || status=1
else
  log "the cuBLAS peer did not build (no cuBLAS to link): mm is compared with PyTorch's only"
fi
cat "$results"/benchmark.log "$results"/torch_peer.log "$results"/bare_launch.log \
  "$results"/cublas_peer.log 2> /dev/null |
  grep '^{' > "$results/benchmarks.jsonl"
python3 - "$results/benchmarks.jsonl" <<'PY' | tee -a "$summary"
import json, sys
r = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    r[d["name"]] = d
def t(n): return r[n]["seconds_per_iter"] if n in r else None
def bw(n): return r[n]["gb_per_s"] if n in r else None
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
     t("torch_softmax_bfloat16_8192x4096"), t("softmax_bfloat16_8192x4096"), lambda a, b: a / b),
    ("torch layer_norm / Tessera native_layer_norm time, [8192, 4096] bfloat16 (target >= 1.0)",
     t("torch_layer_norm_bfloat16_8192x4096"), t("layer_norm_bfloat16_8192x4096"),
     lambda a, b: a / b),
]
for name, a, b, f in rows:
    print(f"{name}: " + (f"{f(a, b):.3f}" if a is not None and b is not None else "not measured"))
for name in sorted(r):
    d = r[name]
    print(f"  {name}: {d['seconds_per_iter'] * 1e6:.2f} us/iter" +
          (f", {d['gb_per_s']:.1f} GB/s" if d["gb_per_s"] else ""))
PY

log "done: $([ $status -eq 0 ] && echo 'every step passed' || echo 'some step failed') (results in $results)"
exit $status
