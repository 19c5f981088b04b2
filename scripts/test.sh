#!/usr/bin/env bash
# Runs every test: install what is missing, build (tests and benchmarks included, so that
# both always compile), run ctest; then the same tests built with AddressSanitizer and
# UndefinedBehaviorSanitizer in build-asan/; then the concurrency tests built with
# ThreadSanitizer in build-tsan/; last, every fuzz target for a short fixed time
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

# ThreadSanitizer: the tests whose threads share the runtime (the thread pool, concurrent
# dispatch and registration, loading and unloading plugins under concurrent calls), not the
# whole suite (CI time: TSan runs them 5-15x slower). docs/build.md says why and how.
TESSERA_BUILD_DIR="${TESSERA_ROOT}/build-tsan"
tsan_tests=(tessera_core_test tessera_dispatcher_test tessera_c_api_test tessera_loader_test
            tessera_loader_evil_plugin_test tessera_prepared_call_test)
tessera_build_targets "${tsan_tests[@]}" tessera_tsan_mutex_counter_1 tessera_tsan_mutex_counter_0 \
  -- -DTESSERA_BUILD_TESTS=ON -DTESSERA_BUILD_BENCHMARKS=OFF -DTESSERA_SANITIZE=thread
ctest --test-dir "$TESSERA_BUILD_DIR" --output-on-failure --parallel "$(nproc)" \
  -R "^($(IFS='|'; echo "${tsan_tests[*]}")|tessera_tsan_annotations_.*)\$"

# Each fuzz target for a fixed number of inputs from a fixed seed on its seed corpus
# (regression inputs included): the same inputs on every run, so CI cannot fail by chance;
# a time cap stops a slow machine early without failing. Longer runs: docs/build.md.
"${TESSERA_ROOT}/scripts/fuzz.sh" --runs 30000 --seed 1 --seconds 120
