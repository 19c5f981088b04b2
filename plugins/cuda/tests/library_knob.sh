#!/bin/sh
# library_knob.sh CONFORMANCE PLUGIN BACKEND VARIABLE LIBRARY: a vendor library's knob
# (TESSERA_GPU_BLAS with `cublas`, TESSERA_GPU_DNN with `cudnn`; docs/gpu_backends.md) as the
# plugin's load sees it. An unknown value refuses the load naming the variable, the value and the
# values expected; LIBRARY is refused by the HIP backend (no such library) and accepted by the
# CUDA one, as are `auto` and `own` by both (a load without a device then ends in conformance's
# exit 77).
set -u
conformance="$1" plugin="$2" backend="$3" variable="$4" library="$5"
fail() { echo "FAIL: $*"; exit 1; }
run() {  # VALUE: conformance on one op with the knob set
  env "$variable=$1" "$conformance" --plugin "$plugin" --op '^add\.Tensor$' 2>&1
}
expect_refused() {  # VALUE EXPECTED-TEXT
  log=$(run "$1")
  rc=$?
  echo "$log"
  [ $rc -ne 0 ] && [ $rc -ne 77 ] || fail "$variable=$1 did not refuse the load (exit $rc)"
  echo "$log" | grep -qF "$2" || fail "$variable=$1: no '$2' in the output"
}
expect_loaded() {  # VALUE
  log=$(run "$1")
  rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 77 ] || { echo "$log"; fail "$variable=$1: exit $rc"; }
}
expect_refused bogus "$variable is 'bogus'; expected auto"
expect_loaded auto
expect_loaded own
if [ "$backend" = hip ]; then
  expect_refused "$library" "$variable is '$library'; expected auto or own (this backend has no"
else
  expect_loaded "$library"
fi
echo "ok: $variable on $backend"
