#!/usr/bin/env bash
# The main job: install what is missing, build, run the embedding demo, then the conformance
# suite and its device contract on the bundled plugins (the CPU backend and the sample
# libnpu.so), printing both coverage tables. Reports land in build/conformance-reports/ (JSON, JUnit XML, Markdown).
# Exit status: non-zero when a step fails or a conformance run finds failures.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

tessera_install_packages
tessera_build
"$TESSERA_BUILD_DIR/bin/tessera_demo" "$TESSERA_BUILD_DIR/lib/tessera/examples/libnpu.so"

reports="$TESSERA_BUILD_DIR/conformance-reports"
mkdir -p "$reports"
status=0
for target in cpu npu; do
  args=(--json "$reports/$target.json" --junit "$reports/$target.junit.xml"
        --markdown "$reports/$target.md")
  if [ "$target" = npu ]; then
    args+=(--plugin "$TESSERA_BUILD_DIR/lib/tessera/examples/libnpu.so")
  fi
  expectations="$TESSERA_ROOT/conformance/expectations/$target.txt"
  if [ -f "$expectations" ]; then
    args+=(--expect "$expectations")
  fi
  tessera_log "conformance of $target"
  "$TESSERA_BUILD_DIR/bin/conformance" "${args[@]}" || status=$?
  # The device interface itself (docs/conformance.md, The device contract), reported apart.
  contract=(--device-contract --json "$reports/$target.device_contract.json"
            --junit "$reports/$target.device_contract.junit.xml")
  if [ "$target" = npu ]; then
    contract+=(--plugin "$TESSERA_BUILD_DIR/lib/tessera/examples/libnpu.so")
  fi
  tessera_log "device contract of $target"
  "$TESSERA_BUILD_DIR/bin/conformance" "${contract[@]}" || status=$?
done
tessera_log "conformance reports: $reports"
exit "$status"
