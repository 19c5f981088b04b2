#!/bin/sh
# plugin_info_test.sh TOOL NPU_SO CONFORMANCE_JSON OBJCOPY MANIFEST_ON OPS_LOCK
# tessera-plugin-info on the built libnpu.so (its manifest names its ops, schemas and op set,
# when the build embedded one), then on copies: embedding with dtypes from a conformance report,
# re-embedding (one section, same bytes), --json, and the errors for files without a manifest.
set -u
tool="$1" npu="$2" report="$3" objcopy="$4" manifest_on="$5" ops_lock="$6"
# libnpu.so is built against the SDK's current op set: the newest version in the op lock.
opset=$(grep -v '^#' "$ops_lock" | cut -d' ' -f1 | sort -V | tail -n 1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# expect_output NAME EXIT PATTERN...: the last command's exit status and output.
expect() {
  name="$1" want="$2"
  shift 2
  [ "$status" -eq "$want" ] || fail "$name: exit $status, expected $want"
  for pattern in "$@"; do
    grep -qF -- "$pattern" "$work/out" || fail "$name: no '$pattern' in:"
  done
  echo "--- $name"
  cat "$work/out"
}
run() { "$@" > "$work/out" 2>&1; status=$?; }

# The bundled libnpu.so, as the build left it.
run "$tool" "$npu"
if [ "$manifest_on" = "1" ]; then
  expect "built libnpu.so" 0 "plugin:   npu" "device:   npu (privateuse1)" "op set:   $opset" \
    "add.Tensor" "npu::throws(Tensor self) -> Tensor" "npu::add.Tensor" \
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" \
    "mm(Tensor self, Tensor mat2) -> Tensor" "dtypes:   not recorded"
else
  expect "built libnpu.so (TESSERA_PLUGIN_MANIFEST=OFF)" 1 "no Tessera plugin manifest"
fi

# A copy without a manifest: the error says how to embed one.
cp "$npu" "$work/libnpu.so"
"$objcopy" --remove-section .tessera.manifest "$work/libnpu.so"
run "$tool" "$work/libnpu.so"
expect "no manifest" 1 "no Tessera plugin manifest" "tessera-plugin-info --embed"

# Embedding, with dtypes from a conformance report.
run "$tool" --embed "$work/libnpu.so" --dtypes-from "$report" --objcopy "$objcopy"
expect "embed with dtypes" 0 "embedded the manifest of plugin 'npu'" "dtypes from conformance_npu.json"
run "$tool" "$work/libnpu.so"
expect "dtypes" 0 "dtypes:   from conformance on npu (conformance_npu.json), 2 ops" \
  "add.Tensor: float32=pass float16=unsupported" "mm: float32=partial float64=fail"
run "$tool" --json "$work/libnpu.so"
expect "--json" 0 '"plugin": "npu"' "\"op_set\": \"$opset\"" '"op": "add.Tensor"' \
  '"mm": {"float32": "partial", "float64": "fail"}'

# Re-embedding replaces the section: one section, not allocated, and the same bytes each time.
run "$tool" --embed "$work/libnpu.so" --objcopy "$objcopy"
expect "re-embed" 0 "dtypes not recorded"
cp "$work/libnpu.so" "$work/first.so"
run "$tool" --embed "$work/libnpu.so" --objcopy "$objcopy"
cmp -s "$work/libnpu.so" "$work/first.so" || fail "re-embedding changed the file"
run "$tool" "$work/libnpu.so"
expect "after re-embed" 0 "dtypes:   not recorded"
count=$(readelf -SW "$work/libnpu.so" | grep -c '\.tessera\.manifest')
[ "$count" -eq 1 ] || fail "$count .tessera.manifest sections after re-embedding"
readelf -lW "$work/libnpu.so" | grep -q '\.tessera\.manifest' &&
  fail "the manifest section is mapped by a segment (it must not be allocated)"
# The plugin still loads: embed it again (which loads it) from the copy.
run "$tool" --embed "$work/libnpu.so" --objcopy "$objcopy"
expect "loads after embedding" 0 "embedded the manifest"

# Files that are not plugins with manifests, and usage errors.
echo "not a plugin" > "$work/text.so"
run "$tool" "$work/text.so"
expect "text file" 1 "not an ELF file"
head -c 200 "$work/libnpu.so" > "$work/cut.so"
run "$tool" "$work/cut.so"
expect "truncated" 1 "truncated"
run "$tool" "$work/missing.so"
expect "missing file" 1 "cannot open"
run "$tool" --embed "$work/text.so" --objcopy "$objcopy"
expect "embed a text file" 1 "the runtime refused"
run "$tool"
expect "no arguments" 2 "expected a plugin file"
run "$tool" --frobnicate x.so
expect "unknown flag" 2 "unknown flag --frobnicate"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "ok"
