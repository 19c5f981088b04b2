#!/bin/sh
# Shows that abi_lock.sh can fail: against doctored copies of the lock it must report a
# changed offset, a removed symbol and a shrunk struct as breaking, and an unrecorded new
# symbol as additive-but-unrecorded.
set -u
dump="$1"; lib="$2"; lock="$3"
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

expect() {  # expect NAME PATTERN: the check fails and prints PATTERN
  name="$1"; pattern="$2"
  if out=$("$here/abi_lock.sh" "$dump" "$lib" "$tmp/lock" 2>&1); then
    echo "FAIL ($name): the check passed"; status=1
  elif ! printf '%s\n' "$out" | grep -q "$pattern"; then
    echo "FAIL ($name): expected '$pattern' in:"; printf '%s\n' "$out"; status=1
  else
    echo "ok ($name): $(printf '%s\n' "$out" | grep "$pattern" | head -1)"
  fi
}

sed 's/^offset tsr_plugin_desc.name 8 /offset tsr_plugin_desc.name 16 /' "$lock" > "$tmp/lock"
expect "moved field" "BREAKING: offset tsr_plugin_desc.name changed from 16 to 8"
sed 's/^symbol tsr_op_call - since 1.0$/symbol tsr_op_call_v0 - since 1.0/' "$lock" > "$tmp/lock"
expect "removed symbol" "BREAKING: symbol tsr_op_call_v0 was removed"
sed 's/^size tsr_runtime_api \([0-9]*\) /size tsr_runtime_api 9999 /' "$lock" > "$tmp/lock"
expect "shrunk table" "BREAKING: tsr_runtime_api shrank from 9999"
sed 's/^enum TSR_DTYPE_FLOAT32 8 /enum TSR_DTYPE_FLOAT32 7 /' "$lock" > "$tmp/lock"
expect "renumbered enum" "BREAKING: enum TSR_DTYPE_FLOAT32 changed from 7 to 8"
grep -v '^symbol tsr_stack_clear ' "$lock" > "$tmp/lock"
expect "unrecorded addition" "additive: new symbol tsr_stack_clear"
exit $status
