# Shared by scripts/run.sh and scripts/test.sh (sourced, not run): installs the Debian packages
# the build needs when they are missing, then configures and builds into build/.
#
# Idempotent: a second run finds every package installed and rebuilds only what changed
# (Ninja + ccache).

TESSERA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TESSERA_BUILD_DIR="${TESSERA_ROOT}/build"

# Everything the build and the tests use, by Debian package name. The scripts install with
# --no-install-recommends, so nothing may come in as a Recommends: ocl-icd-opencl-dev is one of
# libdnnl-dev (its CMake config calls find_package(OpenCL)), named here for that reason.
# The fuzz build (scripts/fuzz.sh) uses clang: libclang-rt-14-dev (libFuzzer, the sanitizer
# runtimes, FuzzedDataProvider.h) is only a Recommends of clang-14's libclang-common-14-dev,
# and llvm brings llvm-symbolizer, without which sanitizer stacks are bare addresses.
# binutils: objcopy, which embeds each plugin's manifest (TESSERA_PLUGIN_MANIFEST); g++ pulls it
# in today, named here because the build calls it itself.
# python3-numpy: the DLPack interop test's consumer (tessera_dlpack_numpy; PyTorch's twin is
# tessera_dlpack_torch). python3-torch and python3-torchvision: the model exporter's input
# (tools/exporter) and the model zoo's models (tests/models, tessera_model_zoo); large, and
# never a dependency of the runtime itself. libdlpack-dev: Debian's dlpack.h (0.6), which the DLPack tests check the runtime's
# own mirror of the spec against and compile a C embedder with.
# valgrind and python3: the instruction-count gate (docs/performance.md) counts under callgrind
# (valgrind also ships valgrind/callgrind.h, which marks the measured region) and its driver is
# a Python 3 script (standard library only).
# xz-utils: scripts/gpu-bundle.sh packs the GPU bundle with xz, and gpu-check.sh (and its dry
# run, a test) its results.
# hipcc, libamdhip64-dev: the HIP backend, libtessera_hip.so (ROCm 5.2, with its own clang 15;
# docs/gpu_backends.md). CUDA is not a Debian package: the CUDA backend is built where
# /usr/local/cuda (or nvcc in PATH) is.
TESSERA_PACKAGES=(
  cmake ninja-build g++ binutils ccache pkg-config git
  libabsl-dev libffi-dev libgtest-dev libgmock-dev libbenchmark-dev
  libdnnl-dev ocl-icd-opencl-dev libsleef-dev
  clang libclang-rt-14-dev llvm
  python3 python3-numpy python3-torch python3-torchvision libdlpack-dev valgrind xz-utils
  hipcc libamdhip64-dev
)

# ccache: hash paths relative to the checkout, so that a fresh clone in another folder (as CI
# makes) still hits the cache that an earlier build filled.
export CCACHE_BASEDIR="$TESSERA_ROOT"
export CCACHE_NOHASHDIR=1

tessera_log() { printf '[tessera] %s\n' "$*" >&2; }

tessera_install_packages() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    tessera_log "not a Debian system: make sure these are installed: ${TESSERA_PACKAGES[*]}"
    return 0
  fi
  local missing=() pkg
  for pkg in "${TESSERA_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$pkg")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo=(sudo)
    else
      tessera_log "missing Debian packages: ${missing[*]}"
      tessera_log "run as root: apt-get update && apt-get install -y ${missing[*]}"
      exit 1
    fi
  fi
  tessera_log "installing missing Debian packages: ${missing[*]}"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}"
}

# tessera_configure [extra cmake -D options...]: configure $TESSERA_BUILD_DIR (the first time,
# or again with the options given).
tessera_configure() {
  cd "$TESSERA_ROOT"
  if [ ! -f "$TESSERA_BUILD_DIR/build.ninja" ]; then
    cmake -S . -B "$TESSERA_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
  elif [ $# -gt 0 ]; then
    cmake "$TESSERA_BUILD_DIR" "$@"
  fi
}

# tessera_build [extra cmake -D options...]: configure and build everything.
tessera_build() {
  tessera_configure "$@"
  cmake --build "$TESSERA_BUILD_DIR" --parallel "$(nproc)"
}

# tessera_build_targets TARGET... -- [extra cmake -D options...]: configure and build only the
# targets named (with what they depend on).
tessera_build_targets() {
  local targets=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    targets+=("$1")
    shift
  done
  [ $# -gt 0 ] && shift
  tessera_configure "$@"
  cmake --build "$TESSERA_BUILD_DIR" --parallel "$(nproc)" --target "${targets[@]}"
}
