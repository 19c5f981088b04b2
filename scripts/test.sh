#!/usr/bin/env bash
# Runs every test: install what is missing, build (tests and benchmarks included, so that
# both always compile), then ctest. Exits non-zero on any failure.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

tessera_install_packages
tessera_build -DTESSERA_BUILD_TESTS=ON -DTESSERA_BUILD_BENCHMARKS=ON
ctest --test-dir "$TESSERA_BUILD_DIR" --output-on-failure --parallel "$(nproc)"
