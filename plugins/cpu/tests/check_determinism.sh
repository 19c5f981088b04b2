#!/bin/sh
# Runs the determinism digest with 1, 2 and 3 threads, each twice. Every result must be the same
# run to run for a thread count; every result but those on oneDNN (".onednn" in the name:
# oneDNN splits its work by the thread count, which is Tessera's, docs/cpu_backend.md) must also
# be the same across thread counts.
set -eu
bin="$1"
ours() { grep -v '\.onednn ' || true; }
ref="$(TESSERA_NUM_THREADS=1 "$bin")"
for threads in 1 2 2 3; do
  out="$(TESSERA_NUM_THREADS=$threads "$bin")"
  again="$(TESSERA_NUM_THREADS=$threads "$bin")"
  if [ "$out" != "$again" ]; then
    echo "results differ between two runs with $threads threads:"
    echo "--- first"; echo "$out"; echo "--- second"; echo "$again"
    exit 1
  fi
  if [ "$(echo "$out" | ours)" != "$(echo "$ref" | ours)" ]; then
    echo "results differ between 1 and $threads threads:"
    echo "--- 1 thread"; echo "$ref"; echo "--- $threads threads"; echo "$out"
    exit 1
  fi
done
echo "$ref"
echo "identical run to run with 1, 2 and 3 threads, and across them but for oneDNN's"
