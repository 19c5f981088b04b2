#!/bin/sh
# The runtime library exports the C ABI (tsr_*) and nothing else: no C++ symbol of the core,
# the dispatcher or Abseil may leak, or plugins and embedders could come to depend on it.
set -eu
lib="$1"
exports=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^_init$' | grep -v '^_fini$')
leaked=$(printf '%s\n' "$exports" | grep -v '^tsr_' || true)
count=$(printf '%s\n' "$exports" | grep -c '^tsr_' || true)
if [ -n "$leaked" ]; then
  echo "FAIL: $lib exports symbols outside the C ABI:"
  printf '%s\n' "$leaked" | head -20
  exit 1
fi
if [ "$count" -eq 0 ]; then
  echo "FAIL: $lib exports no tsr_* symbol"
  exit 1
fi
echo "ok: $lib exports $count tsr_* symbols and nothing else"
