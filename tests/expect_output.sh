#!/bin/sh
# expect_output.sh EXPECTED COMMAND ARGS...: passes when COMMAND exits 0 and its output (stdout
# and stderr) contains EXPECTED. CTest's PASS_REGULAR_EXPRESSION alone ignores the exit status,
# so a program that printed the line and then crashed would pass.
set -u
expected="$1"
shift
output=$("$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -ne 0 ]; then
  echo "expect_output: exit status $status, expected 0: $*"
  exit 1
fi
case "$output" in
  *"$expected"*) ;;
  *) echo "expect_output: the output lacks \"$expected\": $*"; exit 1 ;;
esac
