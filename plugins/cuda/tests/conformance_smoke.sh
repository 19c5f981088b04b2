#!/bin/sh
# conformance_smoke.sh CONFORMANCE PLUGIN BACKEND: conformance of a GPU plugin on add and exp.
# Without a device it must say so with exit code 77 (docs/conformance.md) and write nothing;
# with one it must pass. Any other outcome fails.
set -u
conformance="$1" plugin="$2" backend="$3"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$conformance" --plugin "$plugin" --op '^(add\.Tensor|exp)$' --json "$out/report.json" > "$out/log" 2>&1
rc=$?
cat "$out/log"
case $rc in
  77)
    grep -q "conformance: no device ${backend}:0 is present on this machine (plugin '${backend}' reports 0); nothing was tested" "$out/log" ||
      { echo "FAIL: exit 77 without the no-device message"; exit 1; }
    [ ! -e "$out/report.json" ] || { echo "FAIL: a report was written for a run that tested nothing"; exit 1; }
    echo "ok: no ${backend} device here; conformance said so with exit code 77" ;;
  0) echo "ok: conformance of $backend on add and exp passed" ;;
  *) echo "FAIL: conformance exited with $rc"; exit 1 ;;
esac
