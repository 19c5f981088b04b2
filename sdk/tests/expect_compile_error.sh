#!/bin/sh
# expect_compile_error.sh EXPECTED COMPILER ARGS...: passes when the compile fails and its output
# contains EXPECTED (a compile-time check that must refuse a program).
set -u
expected="$1"
shift
if output=$("$@" 2>&1); then
  echo "expected the compile to fail with \"$expected\", but it succeeded: $*"
  exit 1
fi
case "$output" in
  *"$expected"*) echo "refused as expected: $expected" ;;
  *) printf 'the compile failed, but without "%s":\n%s\n' "$expected" "$output"; exit 1 ;;
esac
