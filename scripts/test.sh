#!/usr/bin/env bash
# Runs every test: install what is missing, build (tests and benchmarks included, so that
# both always compile), run ctest; then the same tests built with AddressSanitizer and
# UndefinedBehaviorSanitizer in build-asan/; last, every fuzz target for a short fixed time
# (scripts/fuzz.sh, clang, build-fuzz/). Exits non-zero on any failure.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

tessera_install_packages
tessera_build -DTESSERA_BUILD_TESTS=ON -DTESSERA_BUILD_BENCHMARKS=ON
ctest --test-dir "$TESSERA_BUILD_DIR" --output-on-failure --parallel "$(nproc)"

TESSERA_BUILD_DIR="${TESSERA_ROOT}/build-asan"
tessera_build -DTESSERA_BUILD_TESTS=ON -DTESSERA_BUILD_BENCHMARKS=OFF \
  -DTESSERA_SANITIZE=address,undefined
ctest --test-dir "$TESSERA_BUILD_DIR" --output-on-failure --parallel "$(nproc)"

# Each fuzz target for 30 s on its seed corpus (regression inputs included).
"${TESSERA_ROOT}/scripts/fuzz.sh" --seconds 30
