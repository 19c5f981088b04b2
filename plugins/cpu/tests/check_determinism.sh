#!/bin/sh
# Runs the determinism digest with 1, 2 and 3 threads (and twice with 2): all must agree.
set -eu
bin="$1"
ref="$(TESSERA_NUM_THREADS=1 "$bin")"
for threads in 2 2 3; do
  out="$(TESSERA_NUM_THREADS=$threads "$bin")"
  if [ "$out" != "$ref" ]; then
    echo "results differ between 1 and $threads threads:"
    echo "--- 1 thread"; echo "$ref"; echo "--- $threads threads"; echo "$out"
    exit 1
  fi
done
echo "$ref"
echo "identical with 1, 2 and 3 threads"
