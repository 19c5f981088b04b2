#!/usr/bin/env bash
# scripts/gpu-check.sh [BUNDLE]: the GPU backend's checks on a machine with an NVIDIA GPU, nvcc,
# CMake, Ninja and PyTorch with CUDA but none of Debian's packages, in one call of the device
# tool (docs/gpu_backends.md, "On a GPU machine"). BUNDLE: what scripts/gpu-bundle.sh made, a
# .tar.xz (default: build-gpu-bundle/tessera-gpu-bundle.tar.xz) or a folder holding its
# unpacked tessera/ (gpu-bundle.sh --dir).
#
# The device tool gives one command 10 minutes and a session 15 minutes of device time, machine
# start included, and returns at most 8 files. So the whole run has one deadline
# (TESSERA_GPU_CHECK_DEADLINE seconds, default 330: a rerun still fits), every step's limit is
# cut to what is left of it, and the steps run most telling first:
#   1. build libtessera_cuda.so from the bundle's headers with this machine's nvcc;
#   2. the device tests, each test of tessera_gpu_plugin_test in its own process (a device fault
#      poisons its process's context, not the next test's), products on cuBLAS and convolutions
#      on cuDNN where PyTorch's libraries are found, then the product tests on our tiled kernel
#      (TESSERA_GPU_BLAS=own) and the nn tests on the direct convolution (TESSERA_GPU_DNN=own);
#   3. the benchmarks: Tessera's, PyTorch's CUDA ops, cuBLAS called directly and a bare launch,
#      and the targets' ratios (benchmarks/gpu/gpu_ratios.py);
#   4. conformance, one process per op family (conformance --family), each isolated per op;
#   5. compute-sanitizer's memcheck on the elementwise, index, sort and convolution ops.
# Results: $OUT (the device tool's folder) or ./gpu-check-out holds two files, rewritten after
# every step so that a run cut short still returns what finished: summary.txt (each step's
# outcome, the test and conformance tallies, the ratios) and gpu-check.tar.xz (every log and
# report). Exit status: 0 when every step passed (a step with no device to run on counts as
# passed only in the summary's words: "no device"), 1 when one failed or was cut by the
# deadline, 77 when there is no GPU (no nvidia-smi, or it lists none).
set -uo pipefail

bundle="${1:-build-gpu-bundle/tessera-gpu-bundle.tar.xz}"
deadline="${TESSERA_GPU_CHECK_DEADLINE:-330}"
case "$deadline" in
  '' | *[!0-9]*) echo "gpu-check: TESSERA_GPU_CHECK_DEADLINE must be whole seconds, got '$deadline'" >&2
    exit 2 ;;
esac
# The plugin's build step: 180 s fits the GPU machine's 16 cores; the dry run on a 2-core CI
# machine, beside other tests, needs longer.
build_limit="${TESSERA_GPU_CHECK_BUILD_LIMIT:-180}"
case "$build_limit" in
  '' | *[!0-9]*) echo "gpu-check: TESSERA_GPU_CHECK_BUILD_LIMIT must be whole seconds, got '$build_limit'" >&2
    exit 2 ;;
esac
out="${OUT:-$PWD/gpu-check-out}"
work="${TMPDIR:-/tmp}/tessera-gpu-check"
logs="$work/logs"  # everything the archive holds
rm -rf "$work"
mkdir -p "$out" "$logs"
summary="$out/summary.txt"
: > "$summary"
status=0
started=$(date +%s)
# Seconds kept back from the last step for the final archive.
reserve=10

log() { printf '[gpu-check] %s\n' "$*" | tee -a "$summary" >&2; }
left() { echo $((deadline - ($(date +%s) - started))); }
# bounded COMMAND...: a command outside the steps, held to what is left of the deadline (5 s at
# least, so that the last archive still gets written).
bounded() {
  local limit
  limit=$(left)
  [ "$limit" -ge 5 ] || limit=5
  timeout --kill-after=2 "$limit" "$@"
}
# archive: every log and report into $out/gpu-check.tar.xz, replaced whole (a run killed while
# archiving keeps the previous one).
archive() {
  bounded tar -C "$work" -cf "$work/logs.tar" logs 2> /dev/null &&
    bounded xz -T0 -3 -c "$work/logs.tar" > "$out/gpu-check.tar.xz.tmp" &&
    mv "$out/gpu-check.tar.xz.tmp" "$out/gpu-check.tar.xz"
  rm -f "$work/logs.tar"
}
# step NAME SECONDS COMMAND...: run with a limit of SECONDS or what the deadline leaves, log the
# outcome, archive. Returns the command's status; 124 when it ran out of time or was not started.
step() {
  local name="$1" limit="$2" start rc ms remaining
  shift 2
  remaining=$(($(left) - reserve))
  if [ "$remaining" -lt 5 ]; then
    log "$name: not run: the deadline (${deadline} s) is reached"
    return 124
  fi
  [ "$limit" -le "$remaining" ] || limit=$remaining
  start=$(date +%s%N)
  timeout --kill-after=5 "$limit" "$@" > "$logs/$name.log" 2>&1
  rc=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  case $rc in
    0) log "$name: passed in $((ms / 1000)).$((ms % 1000 / 100)) s" ;;
    77) log "$name: no device to run on (exit 77) in $((ms / 1000)).$((ms % 1000 / 100)) s" ;;
    124 | 137) log "$name: killed at its limit of $limit s" ;;
    *) log "$name: FAILED with exit $rc in $((ms / 1000)).$((ms % 1000 / 100)) s (log: $name.log)" ;;
  esac
  archive
  return $rc
}
# judged STATUS: a step's status for the run's (0 and 77 pass).
judged() { [ "$1" -eq 0 ] || [ "$1" -eq 77 ] || status=1; }

if ! command -v nvidia-smi > /dev/null || ! nvidia-smi -L > "$logs/gpus.txt" 2>&1 ||
  ! grep -q '^GPU ' "$logs/gpus.txt"; then
  log "no NVIDIA GPU here (nvidia-smi -L lists none); nothing to check"
  archive
  exit 77
fi
log "GPUs: $(tr '\n' ';' < "$logs/gpus.txt")"
log "deadline: ${deadline} s for the whole run"

# The bundle: a .tar.xz, or a folder that holds its tessera/ unpacked.
if [ -d "$bundle" ]; then
  prefix="$(cd "$bundle" && pwd)/tessera"
elif bounded tar -C "$work" -xJf "$bundle"; then
  prefix="$work/tessera"
else
  log "cannot unpack $bundle"
  archive
  exit 1
fi
[ -d "$prefix/bin" ] || { log "$bundle holds no tessera/bin: not a bundle of gpu-bundle.sh"; archive; exit 1; }
log "bundle: $bundle (commit $(cat "$prefix/share/tessera/gpu/commit" 2> /dev/null || echo unknown))"
deps="$prefix/lib/deps"
system="$prefix/lib/system"
export LD_LIBRARY_PATH="$prefix/lib:$deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Debian 12's binaries need glibc >= 2.36; on an older machine they run under the bundled
# loader and C library (and so does the plugin built here, which then needs nothing newer).
# `env` alone runs a program as it is: these arrays are never empty (bash before 4.4 calls an
# empty array's expansion unbound under set -u).
run=(env)
bundled_loader=0
if ! bounded "$prefix/bin/conformance" --list > /dev/null 2> "$logs/loader_probe.log"; then
  bundled_loader=1
  run=("$system/ld-linux-x86-64.so.2" --library-path "$prefix/lib:$deps:$system")
  log "this machine's C library is older than Debian 12's: using the bundled one"
fi

# 1. Build the CUDA plugin here, from the installed headers and CMake package.
build="$work/build-cuda"
if step build_plugin "$build_limit" env -u LD_LIBRARY_PATH sh -c "cmake -S '$prefix/share/tessera/gpu/src' -B '$build' -G Ninja \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH='$prefix' -DTESSERA_WITH_CUDA=ON \
      -DTESSERA_PLUGIN_MANIFEST=OFF && cmake --build '$build'"; then
  cp "$build/libtessera_cuda.so" "$prefix/lib/tessera/plugins/"
  plugin="$prefix/lib/tessera/plugins/libtessera_cuda.so"
else
  log "the CUDA plugin did not build: nothing else can run (build_plugin.log)"
  archive
  exit 1
fi

# The plugin loads cuBLAS at its first product and cuDNN at its first convolution
# (docs/gpu_backends.md, "The matrix products", "Convolutions on cuDNN"): a machine with only the
# driver has neither, but PyTorch's CUDA wheel ships libcublas.so.13 and libcudnn.so.9 (in
# torch/lib or site-packages/nvidia/.../lib). Found, their folders go on the library path of the
# runs that should use them; not found, the products run on the tiled kernel and the
# convolutions on the direct one, and the summary says so.
find_beside_torch() {  # find_beside_torch LIBRARY: the folder holding it beside PyTorch, or ""
  bounded python3 - "$1" 2> /dev/null <<'PY'
import glob, os, sys, torch
name = sys.argv[1]
torch_dir = os.path.dirname(torch.__file__)
site = os.path.dirname(torch_dir)
for pattern in (os.path.join(torch_dir, "lib", name + "*"),
                os.path.join(site, "nvidia", "**", name + "*")):
    found = sorted(glob.glob(pattern, recursive=True))
    if found:
        print(os.path.dirname(found[0]))
        break
PY
}
blas_dir=$(find_beside_torch libcublas.so.13)
dnn_dir=$(find_beside_torch libcudnn.so.9)
if [ -n "$blas_dir" ]; then
  log "cuBLAS for the products: $blas_dir (PyTorch's)"
else
  log "no libcublas.so.13 beside PyTorch: the products use the system's cuBLAS if the loader finds one, else the tiled kernel"
fi
if [ -n "$dnn_dir" ]; then
  log "cuDNN for the convolutions: $dnn_dir (PyTorch's)"
else
  log "no libcudnn.so.9 beside PyTorch: the convolutions use the system's cuDNN if the loader finds one, else the direct kernel"
fi
vendor_dirs="${blas_dir}${dnn_dir:+${blas_dir:+:}$dnn_dir}"
blas_env=(LD_LIBRARY_PATH="$LD_LIBRARY_PATH${vendor_dirs:+:$vendor_dirs}")
run_blas=("${run[@]}")
if [ $bundled_loader -eq 1 ] && [ -n "$vendor_dirs" ]; then
  run_blas=("$system/ld-linux-x86-64.so.2" --library-path "$prefix/lib:$deps:$system:$vendor_dirs")
fi
blas_path() {  # blas_path LOG: the plugin's one line on the products' path, or why there is none
  grep -m1 -o 'cuda: matrix products on .*' "$logs/$1" 2> /dev/null || echo "(no product ran: no path logged)"
}
plugin_test=(env "${blas_env[@]}" TESSERA_LOG_LEVEL=info TESSERA_GPU_TEST_PLUGINS="cuda=$plugin"
  "${run_blas[@]}" "$prefix/bin/tessera_gpu_plugin_test")

# 2. The device tests, one process each.
mapfile -t tests < <(bounded "${plugin_test[@]}" --gtest_list_tests 2> /dev/null |
  awk '/^[^ ]/ {suite = $1} /^  / {print suite $1}')
log "device tests: ${#tests[@]} (each in its own process)"
if [ ${#tests[@]} -eq 0 ]; then
  log "device tests: FAILED: tessera_gpu_plugin_test listed none (see its --gtest_list_tests)"
  status=1
fi
passed=0 failed=0 skipped=0 not_run=0
for test in ${tests[@]+"${tests[@]}"}; do
  if [ "$not_run" -gt 0 ]; then
    not_run=$((not_run + 1))
    continue
  fi
  name="test_${test//[^A-Za-z0-9]/_}"
  step "$name" 90 "${plugin_test[@]}" --gtest_filter="$test" \
    --gtest_output="xml:$logs/$name.xml"
  rc=$?
  if [ $rc -eq 124 ] && ! [ -e "$logs/$name.log" ]; then  # the deadline: the rest not run
    not_run=1
    continue
  fi
  if [ $rc -ne 0 ]; then
    failed=$((failed + 1))
  elif grep -q '^\[  SKIPPED \]' "$logs/$name.log"; then
    skipped=$((skipped + 1))
  else
    passed=$((passed + 1))
  fi
done
log "device tests: $passed passed, $skipped skipped (no device), $failed failed, $not_run not run (the deadline), of ${#tests[@]}"
[ "$failed" -eq 0 ] && [ "$not_run" -eq 0 ] || status=1
log "products, TESSERA_GPU_BLAS=auto: $(cat "$logs"/test_*MatrixProducts*.log 2> /dev/null | grep -m1 -o 'cuda: matrix products on .*' || echo '(no product ran: no path logged)')"
log "convolutions, TESSERA_GPU_DNN=auto: $(cat "$logs"/test_*NnOps*.log 2> /dev/null | grep -m1 -o 'cuda: convolutions on .*' || echo '(no convolution ran: no path logged)')"
# The same products on the tiled kernel (the HIP backend's, and CUDA's without cuBLAS).
step products_own_gemm 60 env TESSERA_GPU_BLAS=own TESSERA_LOG_LEVEL=info \
  TESSERA_GPU_TEST_PLUGINS="cuda=$plugin" "${run[@]}" "$prefix/bin/tessera_gpu_plugin_test" \
  --gtest_filter='*MatrixProducts*' --gtest_output="xml:$logs/products_own_gemm.xml"
judged $?
log "products, TESSERA_GPU_BLAS=own: $(blas_path products_own_gemm.log)"
# The convolutions on the direct kernel (the HIP backend's, and CUDA's without cuDNN).
step convolutions_own_kernel 60 env TESSERA_GPU_DNN=own TESSERA_LOG_LEVEL=info \
  TESSERA_GPU_TEST_PLUGINS="cuda=$plugin" "${run[@]}" "$prefix/bin/tessera_gpu_plugin_test" \
  --gtest_filter='*NnOps*' --gtest_output="xml:$logs/convolutions_own_kernel.xml"
judged $?

# 3. Benchmarks, in this one run: Tessera's products take the cuBLAS path when the plugin finds
# one (as PyTorch's).
step benchmark 90 env "${blas_env[@]}" TESSERA_LOG_LEVEL=info "${run_blas[@]}" \
  "$prefix/bin/tessera_gpu_benchmark" cuda:0
judged $?
log "benchmark products: $(blas_path benchmark.log)"
(unset LD_LIBRARY_PATH; step torch_peer 60 python3 "$prefix/share/tessera/gpu/bench/gpu_torch_peer.py" cuda:0)
judged $?
if step bare_launch_build 60 env -u LD_LIBRARY_PATH nvcc -O2 -o "$work/gpu_bare_launch" \
    "$prefix/share/tessera/gpu/bench/gpu_bare_launch.cu"; then
  step bare_launch 30 env -u LD_LIBRARY_PATH "$work/gpu_bare_launch"
  judged $?
fi
# The cuBLAS peer links the toolkit's cuBLAS, else PyTorch's (then found through an rpath).
peer_src="$prefix/share/tessera/gpu/bench/gpu_cublas_peer.cu"
if step cublas_peer_build 60 env -u LD_LIBRARY_PATH nvcc -O2 -o "$work/gpu_cublas_peer" \
    "$peer_src" -lcublas ||
  { [ -n "$blas_dir" ] && step cublas_peer_build_torch 60 env -u LD_LIBRARY_PATH nvcc -O2 \
      -o "$work/gpu_cublas_peer" "$peer_src" -L"$blas_dir" -l:libcublas.so.13 \
      -Xlinker -rpath="$blas_dir"; }; then
  step cublas_peer 60 env -u LD_LIBRARY_PATH "$work/gpu_cublas_peer"
  judged $?
else
  log "the cuBLAS peer did not build (no cuBLAS to link): mm is compared with PyTorch's only"
fi
cat "$logs"/benchmark.log "$logs"/torch_peer.log "$logs"/bare_launch.log \
  "$logs"/cublas_peer.log 2> /dev/null | grep '^{' > "$logs/benchmarks.jsonl"
bounded python3 "$prefix/share/tessera/gpu/bench/gpu_ratios.py" "$logs/benchmarks.jsonl" 2>&1 |
  tee -a "$summary" >&2
archive

# 4. Conformance, one family per process; within it each op in its own child (--isolate: the
# children load the plugin themselves), four at a time. Reports keep the failing cases' details.
for family in pointwise reductions linalg_nn index activations training; do
  step "conformance_$family" 90 env "${blas_env[@]}" "${run_blas[@]}" "$prefix/bin/conformance" \
    --plugin "$plugin" --family "$family" --jobs 4 --timeout 60 --json-detail failures \
    --json "$logs/conformance_$family.json" --junit "$logs/conformance_$family.xml" \
    --markdown "$logs/conformance_$family.md"
  rc=$?
  judged $rc
  grep -E '^(cases|ops|time):' "$logs/conformance_$family.log" 2> /dev/null |
    sed "s/^/  $family /" | tee -a "$summary" >&2
  [ $rc -ne 124 ] || [ -e "$logs/conformance_$family.log" ] || break  # the deadline
done

# 5. memcheck with the direct allocator (every tensor its own cudaMalloc, so that an
# out-of-bounds access is not inside a cached block), on the families where an index or a
# window goes out of bounds: elementwise (broadcasting and 32-bit splits), index, sort,
# convolution (our direct kernel: TESSERA_GPU_DNN=own) and pooling. Op names carry their
# overloads (add.Tensor).
if command -v compute-sanitizer > /dev/null; then
  step memcheck 120 env "${blas_env[@]}" TESSERA_GPU_ALLOCATOR=direct TESSERA_GPU_DNN=own \
    compute-sanitizer \
    --tool memcheck --error-exitcode 1 "${run_blas[@]}" "$prefix/bin/conformance" \
    --plugin "$plugin" --dtype float32,int64 --json-detail failures \
    --json "$logs/memcheck.json" \
    --op '^(add\.Tensor|sub\.Tensor|mul\.Tensor|div\.Tensor|where\.self|copy_|fill_\.Scalar|index_select|gather|scatter\.src|scatter_add|embedding|sort|topk|cat|conv2d|conv_transpose2d\.input|max_pool2d_with_indices|avg_pool2d)$'
  judged $?
  grep -E 'ERROR SUMMARY|Program hit' "$logs/memcheck.log" 2> /dev/null | head -5 >> "$summary"
else
  log "memcheck: not run: no compute-sanitizer on this machine"
fi

log "done in $(($(date +%s) - started)) s: $([ $status -eq 0 ] && echo 'every step passed' || echo 'some step failed or was cut') (results in $out: summary.txt, gpu-check.tar.xz)"
archive
exit $status
