#!/bin/sh
# A plugin exports exactly one symbol, tsr_plugin_init, and imports nothing of the runtime
# (DESIGN.md, ABI rule 2): every runtime service reaches it through the function table.
set -eu
plugin="$1"
exports=$(nm -D --defined-only "$plugin" | awk '{print $3}' | grep -v '^_init$' | grep -v '^_fini$')
if [ "$exports" != "tsr_plugin_init" ]; then
  echo "FAIL: $plugin must export only tsr_plugin_init, exports:"
  printf '%s\n' "$exports"
  exit 1
fi
imports=$(nm -D --undefined-only "$plugin" | awk '{print $2}' | grep '^tsr_' || true)
if [ -n "$imports" ]; then
  echo "FAIL: $plugin imports runtime symbols:"
  printf '%s\n' "$imports"
  exit 1
fi
if ldd "$plugin" 2>/dev/null | grep -q 'libtessera'; then
  echo "FAIL: $plugin links libtessera"
  exit 1
fi
echo "ok: $plugin exports only tsr_plugin_init and imports nothing of the runtime"
