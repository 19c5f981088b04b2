#!/usr/bin/env bash
# The unboxed fast path against the boxed one (Note [The unboxed fast path] in
# dispatcher/unboxed_call.cc): every case of the op database (its samples of every dtype, the
# undeclared dtypes, the error inputs), each in its functional, out= and in-place forms, dumped
# with tessera_dump_cases once with the fast path (TESSERA_FAST_PATH unset) and once without
# (TESSERA_FAST_PATH=0); the two dumps (outputs to the bit, errors to the letter) must be the
# same bytes. The fuzzers' inputs get the same comparison in scripts/fuzz.sh.
#
#   paths_agree.sh DUMP_CASES WORK_DIR
set -euo pipefail
dump="$1"
work="$2"
mkdir -p "$work"
env -u TESSERA_FAST_PATH "$dump" --forms --out "$work/fast.jsonl"
TESSERA_FAST_PATH=0 "$dump" --forms --out "$work/boxed.jsonl"
cases=$(wc -l <"$work/fast.jsonl")
if [ "$cases" -eq 0 ]; then
  echo "paths_agree: the dump has no case" >&2
  exit 1
fi
if cmp -s "$work/fast.jsonl" "$work/boxed.jsonl"; then
  echo "paths_agree: the fast and boxed paths agree on all $cases cases (3 forms each)"
  exit 0
fi
line=$(cmp "$work/fast.jsonl" "$work/boxed.jsonl" | sed -n 's/.* line \([0-9]*\)$/\1/p')
echo "paths_agree: the paths differ first at case $line of $cases:" >&2
echo "--- boxed (TESSERA_FAST_PATH=0):" >&2
sed -n "${line}p" "$work/boxed.jsonl" | cut -c1-2000 >&2
echo "--- fast:" >&2
sed -n "${line}p" "$work/fast.jsonl" | cut -c1-2000 >&2
exit 1
