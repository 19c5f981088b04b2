#!/usr/bin/env bash
# gpu_check_dry_run.sh BUILD_DIR: scripts/gpu-check.sh here, without a GPU, on a bundle made from
# BUILD_DIR (scripts/gpu-bundle.sh --dir): proves its paths and that what it returns fits the
# device tool (at most 8 files, no deeper than 2 folders under $OUT, names of letters, digits,
# '.', '_' and '-'), in three runs:
#   1. no nvidia-smi: exit 77 at once, with the summary and the archive;
#   2. a stand-in nvidia-smi that lists a GPU the machine lacks: every step runs (the plugin
#      builds with this machine's nvcc; the device tests skip; conformance and the benchmarks
#      answer 77), the summary names each step and the archive holds each log;
#   3. a deadline too short for the build: the build is killed at the deadline and the run still
#      returns its two files.
set -uo pipefail
build="$(cd "$1" && pwd)"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# fits OUT: the device tool's limits on what comes back.
fits() {
  local dir="$1" files
  files=$(find "$dir" -type f | wc -l)
  [ "$files" -le 8 ] || fail "$dir holds $files files, more than 8"
  if find "$dir" -mindepth 4 | grep -q .; then fail "$dir has something deeper than 2 folders"; fi
  if find "$dir" -mindepth 1 | sed "s|^$dir/||" | grep -q '[^A-Za-z0-9._/-]'; then
    fail "$dir has a name with characters the device tool does not return"
  fi
  [ -s "$dir/summary.txt" ] || fail "no summary.txt in $dir"
  xz -t "$dir/gpu-check.tar.xz" || fail "no readable gpu-check.tar.xz in $dir"
}

"$root/scripts/gpu-bundle.sh" --dir "$tmp/bundle" --build-dir "$build" || fail "gpu-bundle.sh --dir"
check="$tmp/bundle/tessera/share/tessera/gpu/gpu-check.sh"  # the bundle's own copy
[ -x "$check" ] || fail "the bundle holds no gpu-check.sh"

# 1. No nvidia-smi on PATH.
mkdir -p "$tmp/empty-bin"
for tool in bash sh env tar xz date tee cat mkdir rm mv tr grep sed awk timeout; do
  ln -s "$(command -v $tool)" "$tmp/empty-bin/$tool"
done
OUT="$tmp/out1" PATH="$tmp/empty-bin" "$check" "$tmp/bundle" > "$tmp/run1.log" 2>&1
rc=$?
[ $rc -eq 77 ] || { cat "$tmp/run1.log"; fail "without nvidia-smi: exit $rc, expected 77"; }
grep -q 'no NVIDIA GPU here' "$tmp/out1/summary.txt" || fail "run 1's summary does not say why"
fits "$tmp/out1"
echo "ok: no nvidia-smi: exit 77, summary and archive"

# 2. A stand-in nvidia-smi listing a GPU that is not there.
mkdir -p "$tmp/bin"
printf '#!/bin/sh\necho "GPU 0: Stand-in for the dry run (UUID: GPU-00000000-0000-0000-0000-000000000000)"\n' \
  > "$tmp/bin/nvidia-smi"
chmod +x "$tmp/bin/nvidia-smi"
start=$(date +%s)
OUT="$tmp/out2" PATH="$tmp/bin:$PATH" TESSERA_GPU_CHECK_DEADLINE=600 \
  TESSERA_GPU_CHECK_BUILD_LIMIT=480 "$check" "$tmp/bundle" \
  > "$tmp/run2.log" 2>&1
rc=$?
cat "$tmp/out2/summary.txt"
echo "(exit $rc in $(($(date +%s) - start)) s)"
fits "$tmp/out2"
summary="$tmp/out2/summary.txt"
grep -q '^\[gpu-check\] build_plugin: passed' "$summary" || fail "the plugin did not build from the bundle"
grep -Eq '^\[gpu-check\] device tests: [0-9]+ passed, [1-9][0-9]* skipped \(no device\), 0 failed' "$summary" ||
  fail "the device tests did not all run and skip"
for family in pointwise reductions linalg_nn index activations training; do
  grep -q "^\[gpu-check\] conformance_$family: no device to run on (exit 77)" "$summary" ||
    fail "conformance of $family did not run to its no-device answer"
done
grep -q '^\[gpu-check\] benchmark: no device to run on (exit 77)' "$summary" ||
  fail "the benchmark did not run to its no-device answer"
grep -q '^\[gpu-check\] done in ' "$summary" || fail "the summary has no last line"
grep -q 'not measured' "$summary" || fail "the ratios were not printed"
listing=$(tar -tJf "$tmp/out2/gpu-check.tar.xz")
for log in logs/build_plugin.log logs/benchmark.log logs/conformance_pointwise.log \
  logs/conformance_training.log logs/gpus.txt logs/benchmarks.jsonl; do
  grep -qx "$log" <<< "$listing" || fail "the archive lacks $log"
done
[ "$(grep -c '^logs/test_.*\.log$' <<< "$listing")" -ge 10 ] || fail "the archive lacks the device tests' logs"
[ $rc -le 1 ] || fail "with a stand-in GPU: exit $rc, expected 0 or 1"
echo "ok: a stand-in GPU: every step ran, the two files fit"

# 3. A deadline that the build cannot meet.
OUT="$tmp/out3" PATH="$tmp/bin:$PATH" TESSERA_GPU_CHECK_DEADLINE=16 "$check" "$tmp/bundle" \
  > "$tmp/run3.log" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/run3.log"; fail "a deadline of 16 s: exit $rc, expected 1"; }
grep -Eq 'build_plugin: (killed at its limit of [0-9]+ s|not run: the deadline)' "$tmp/out3/summary.txt" ||
  { cat "$tmp/out3/summary.txt"; fail "the build was not cut at the deadline"; }
fits "$tmp/out3"
echo "ok: a deadline too short: the build was cut and the two files came back"
