#!/bin/sh
# blas_knob.sh CONFORMANCE PLUGIN BACKEND: TESSERA_GPU_BLAS (docs/gpu_backends.md) as the plugin's
# load sees it. An unknown value refuses the load naming the variable, the value and the values
# expected; `cublas` is refused by the HIP backend (no BLAS library) and accepted by the CUDA one,
# as are `auto` and `own` by both (a load without a device then ends in conformance's exit 77).
set -u
conformance="$1" plugin="$2" backend="$3"
fail() { echo "FAIL: $*"; exit 1; }
expect_refused() {  # VALUE EXPECTED-TEXT
  log=$(TESSERA_GPU_BLAS="$1" "$conformance" --plugin "$plugin" --op '^add$' 2>&1)
  rc=$?
  echo "$log"
  [ $rc -ne 0 ] && [ $rc -ne 77 ] || fail "TESSERA_GPU_BLAS=$1 did not refuse the load (exit $rc)"
  echo "$log" | grep -qF "$2" || fail "TESSERA_GPU_BLAS=$1: no '$2' in the output"
}
expect_loaded() {  # VALUE
  log=$(TESSERA_GPU_BLAS="$1" "$conformance" --plugin "$plugin" --op '^add$' 2>&1)
  rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 77 ] || { echo "$log"; fail "TESSERA_GPU_BLAS=$1: exit $rc"; }
}
expect_refused bogus "TESSERA_GPU_BLAS is 'bogus'; expected auto"
expect_loaded auto
expect_loaded own
if [ "$backend" = hip ]; then
  expect_refused cublas "TESSERA_GPU_BLAS is 'cublas'; expected auto or own (this backend has no BLAS library"
else
  expect_loaded cublas
fi
echo "ok: TESSERA_GPU_BLAS on $backend"
