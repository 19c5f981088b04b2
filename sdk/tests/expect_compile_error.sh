#!/bin/sh
# expect_compile_error.sh [--absent TEXT] EXPECTED COMPILER ARGS...: passes when the compile
# fails and its output contains EXPECTED (a compile-time check that must refuse a program), and,
# with --absent, does not contain TEXT (a message that would mislead there).
set -u
absent=""
if [ "$1" = "--absent" ]; then
  absent="$2"
  shift 2
fi
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
if [ -n "$absent" ]; then
  case "$output" in
    *"$absent"*) printf 'the compile also said "%s":\n%s\n' "$absent" "$output"; exit 1 ;;
  esac
fi
