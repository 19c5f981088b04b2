#!/usr/bin/env bash
# scripts/gpu-bundle.sh [OUT.tar.xz]: pack what scripts/gpu-check.sh needs on a GPU machine that
# has nvcc, CMake and PyTorch but none of Debian's packages (docs/gpu_backends.md, "On a GPU
# machine"): an installed Tessera (the runtime, conformance, the CPU plugin for cross-backend
# checks, the headers and CMake package the GPU plugin builds against), the GPU plugin's
# sources, the GPU test and benchmark programs, and the Debian libraries they load (Abseil,
# libffi, oneDNN and what it needs; glibc and libstdc++ apart, for a machine older than Debian
# 12). Everything stripped of debug info, in one .tar.xz of at most 64 MiB (what the device tool
# carries); the script fails when it is larger.
#
# Default OUT: build-gpu-bundle/tessera-gpu-bundle.tar.xz (ignored by git; pass it to the device
# tool with carry: ["build-gpu-bundle"]). Builds build/ first (scripts/lib/common.sh's flags).
#
# scripts/gpu-bundle.sh --dir DIR [--build-dir BUILD]: the same contents unpacked into
# DIR/tessera, neither stripped nor packed, from BUILD as it is (default build/; nothing is
# installed or built): what gpu-check.sh's dry run checks
# (plugins/cuda/tests/gpu_check_dry_run.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

limit=$((64 * 1024 * 1024))
dir=""
if [ "${1:-}" = "--dir" ]; then
  [ $# -ge 2 ] || { tessera_log "--dir needs a folder"; exit 2; }
  dir="$2"
  if [ "${3:-}" = "--build-dir" ]; then
    [ $# -ge 4 ] || { tessera_log "--build-dir needs a folder"; exit 2; }
    TESSERA_BUILD_DIR="$(cd "$4" && pwd)"
  fi
else
  out="${1:-${TESSERA_ROOT}/build-gpu-bundle/tessera-gpu-bundle.tar.xz}"
  tessera_install_packages
  # The install needs every installed target, and the bundle the GPU test and benchmark programs.
  tessera_build -DTESSERA_BUILD_TESTS=ON -DTESSERA_BUILD_BENCHMARKS=ON
fi

if [ -n "$dir" ]; then
  mkdir -p "$dir"
  stage="$(cd "$dir" && pwd)"
  rm -rf "$stage/tessera"
else
  stage="$(mktemp -d)"
  trap 'rm -rf "$stage"' EXIT
fi
prefix="$stage/tessera"
cmake --install "$TESSERA_BUILD_DIR" --prefix "$prefix" > "$stage/install.log"
# The GPU plugins are built on the GPU machine, from the bundle's headers, by its own nvcc.
rm -f "$prefix"/lib/tessera/plugins/libtessera_cuda.so "$prefix"/lib/tessera/plugins/libtessera_hip.so
for program in tessera_gpu_plugin_test tessera_gpu_benchmark; do
  cp "$TESSERA_BUILD_DIR/bin/$program" "$prefix/bin/"
done

gpu="$prefix/share/tessera/gpu"
mkdir -p "$gpu/src" "$gpu/bench"
cp "$TESSERA_ROOT"/plugins/cuda/CMakeLists.txt "$TESSERA_ROOT"/plugins/cuda/*.h \
  "$TESSERA_ROOT"/plugins/cuda/*.cc "$TESSERA_ROOT"/plugins/cuda/*.cu "$gpu/src/"
cp "$TESSERA_ROOT"/benchmarks/gpu/gpu_torch_peer.py "$TESSERA_ROOT"/benchmarks/gpu/gpu_bare_launch.cu \
  "$TESSERA_ROOT"/benchmarks/gpu/gpu_cublas_peer.cu "$TESSERA_ROOT"/benchmarks/gpu/gpu_ratios.py \
  "$gpu/bench/"
cp "$TESSERA_ROOT/scripts/gpu-check.sh" "$gpu/"
git -C "$TESSERA_ROOT" rev-parse HEAD > "$gpu/commit" 2>/dev/null || echo unknown > "$gpu/commit"

# The Debian libraries every ELF file of the bundle loads: lib/deps for the libraries that
# Tessera brings (put on LD_LIBRARY_PATH there), lib/system for glibc and the C++ runtime (used
# only with the bundled loader, on a machine whose own are older than Debian 12's).
deps="$prefix/lib/deps"
system="$prefix/lib/system"
mkdir -p "$deps" "$system"
mapfile -t elves < <(find "$prefix/bin" "$prefix/lib" -type f \( -name '*.so*' -o -perm -u+x \) \
  -exec sh -c 'head -c 4 "$1" | grep -q ELF' _ {} \; -print)
for elf in "${elves[@]}"; do
  ldd "$elf" 2>/dev/null | awk '/=> \// {print $3} /^\t\/lib64\// {print $1}'
done | sort -u | while read -r lib; do
  name="$(basename "$lib")"
  case "$name" in
    libtessera*) ;;  # the bundle's own
    ld-linux*|libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|libresolv.so.*|\
    libstdc++.so.*|libgcc_s.so.*)
      cp -L "$lib" "$system/$name" ;;
    *) cp -L "$lib" "$deps/$name" ;;
  esac
done
[ -e "$system/ld-linux-x86-64.so.2" ] || cp -L /lib64/ld-linux-x86-64.so.2 "$system/"

if [ -n "$dir" ]; then
  tessera_log "bundle contents in $prefix ($(du -sm "$prefix" | cut -f1) MiB, $(find "$prefix" -type f | wc -l) files)"
  exit 0
fi

# Debug information is most of the size; symbols stay for backtraces.
find "$prefix" -type f -exec sh -c 'head -c 4 "$1" | grep -q ELF && strip --strip-debug "$1"' _ {} \;

mkdir -p "$(dirname "$out")"
tar -C "$stage" -cf - tessera | xz -T0 -6 > "$out.tmp"
mv "$out.tmp" "$out"
size=$(stat -c %s "$out")
unpacked=$(du -sb "$prefix" | cut -f1)
tessera_log "bundle: $out, $((size / 1024 / 1024)) MiB ($size bytes; $((unpacked / 1024 / 1024)) MiB unpacked, $(find "$prefix" -type f | wc -l) files)"
if [ "$size" -gt "$limit" ]; then
  tessera_log "the bundle is larger than the device tool carries (64 MiB)"
  exit 1
fi
