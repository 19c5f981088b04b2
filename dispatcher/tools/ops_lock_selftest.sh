#!/bin/sh
# Shows that `tessera_ops_lock --check` can fail: against doctored copies of the lock and the
# allow-list it must report each change of PyTorch's table in its class, refuse unrecorded
# additive and backward-compatible changes, pass an allow-listed breaking change, fail an
# expired or stale allow-list entry and malformed lines, and --update must keep an op's history.
#
#   ops_lock_selftest.sh TESSERA_OPS_LOCK LOCK
set -u
tool="$1"; lock="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
: > "$tmp/allow"

run_check() {  # run_check EXTRA...: the check of the doctored lock and allow-list
  "$tool" --check "$tmp/lock" --allow "$tmp/allow" "$@" 2>&1
}
expect() {  # expect NAME TEXT [EXTRA...]: the check fails and prints TEXT
  name="$1"; text="$2"; shift 2
  if out=$(run_check "$@"); then
    echo "FAIL ($name): the check passed"; printf '%s\n' "$out"; status=1
  elif ! printf '%s\n' "$out" | grep -qF -- "$text"; then
    echo "FAIL ($name): expected '$text' in:"; printf '%s\n' "$out"; status=1
  else
    echo "ok ($name): $(printf '%s\n' "$out" | grep -F -- "$text" | head -1)"
  fi
}
expect_pass() {  # expect_pass NAME TEXT [EXTRA...]: the check passes and prints TEXT
  name="$1"; text="$2"; shift 2
  if ! out=$(run_check "$@"); then
    echo "FAIL ($name): the check failed:"; printf '%s\n' "$out"; status=1
  elif ! printf '%s\n' "$out" | grep -qF -- "$text"; then
    echo "FAIL ($name): expected '$text' in:"; printf '%s\n' "$out"; status=1
  else
    echo "ok ($name): $(printf '%s\n' "$out" | grep -F -- "$text" | head -1)"
  fi
}
doctor() {  # doctor SED-SCRIPT: the lock with SED-SCRIPT applied, which must change it
  sed "$1" "$lock" > "$tmp/lock"
  if cmp -s "$lock" "$tmp/lock"; then echo "FAIL: '$1' does not change the lock"; status=1; fi
}

cp "$lock" "$tmp/lock"
expect_pass "the lock itself" "ok: the registry's"

# Breaking: each needs an allow-list entry. The lock is what was expected, the registry found.
printf '1.0 zzz_removed(Tensor self) -> Tensor\n' >> "$tmp/lock"
expect "removed op" "BREAKING zzz_removed: op removed: expected it in the registry, found none"
doctor 's/^1\.0 add\.Tensor(Tensor self, Tensor other,/1.0 add.Tensor(Tensor self, Scalar other,/'
expect "retyped argument" "BREAKING add.Tensor: argument 'other' retyped: expected Scalar, found Tensor"
doctor 's/^1\.0 add\.Tensor(Tensor self, Tensor other,/1.0 add.Tensor(Tensor self, Tensor other2,/'
expect "renamed argument" "BREAKING add.Tensor: argument 1 renamed: expected 'other2', found 'other'"
doctor 's/^1\.0 where\.self(Tensor condition, Tensor self,/1.0 where.self(Tensor self, Tensor condition,/'
expect "reordered arguments" "BREAKING where.self: argument 'self' reordered: expected at position 0, found at 1"
doctor 's/^\(1\.0 add\.Tensor(.*\)alpha=1)/\1alpha=2)/'
expect "changed default" "BREAKING add.Tensor: default of argument 'alpha' changed: expected =2, found =1"
doctor 's/^1\.0 max\.dim(Tensor self, int dim,/1.0 max.dim(Tensor self, int dim=0,/'
expect "removed default" "BREAKING max.dim: default of argument 'dim' removed: expected =0, found none"
doctor 's/^\(1\.0 max\.dim(.*\)Tensor indices)$/\1Tensor idx)/'
expect "changed return" "BREAKING max.dim: return 1 changed: expected Tensor idx, found Tensor indices"
doctor 's/^1\.0 add_\.Tensor(Tensor(a!) self/1.0 add_.Tensor(Tensor(a) self/'
expect "changed alias annotation" "alias annotation of argument 'self' changed: expected Tensor(a), found Tensor(a!)"
expect "breaking names the fix" "not allow-listed: restore the schema the lock records, or add a line \`add_.Tensor <YYYY-MM-DD> <reason>\`"

# Additive and backward compatible: refused until --update records them.
doctor '/^1\.0 _to_copy(/d'
expect "new op" "additive _to_copy: new op"
expect "new op names the update command" "$tool --update $tmp/lock --allow $tmp/allow"
doctor '/^1\.0 add\.Tensor(/d'
expect "new overload" "additive add.Tensor: new overload of add"
doctor 's/^\(1\.0 sum\.dim_IntList(.*\), \*, ScalarType? dtype=None)/\1)/'
expect "trailing defaulted argument" "backward compatible (not forward compatible) sum.dim_IntList: argument ScalarType? dtype=None added at position 3, with a default"
# The lock's newest op set (the runtime's), and the one to bump to.
newest=$(sed -n 's/^\([0-9]*\.[0-9]*\) .*/\1/p' "$lock" | sort -t. -k1,1n -k2,2n | tail -1)
next="${newest%.*}.$((${newest#*.} + 1))"
expect "recorded op set is frozen" "first bump kOpSetVersionMinor in dispatcher/op_set.h (to $next)"
doctor 's/^\(1\.0 sum\.IntList_out(.*\)ScalarType? dtype=None, Tensor(a!) out)/\1Tensor(a!) out)/'
expect "out= form, argument before out" "backward compatible (not forward compatible) sum.IntList_out: argument ScalarType? dtype=None added at position 3"

# The allow-list: an entry passes a breaking change until its expiry, then fails by itself.
doctor 's/^\(1\.0 add\.Tensor(.*\)alpha=1)/\1alpha=2)/'
printf '# comment\n\nadd.Tensor 2099-12-31 testing the allow-list\n' > "$tmp/allow"
expect_pass "allow-listed breaking change" "allowed until 2099-12-31 by $tmp/allow:3 (testing the allow-list)" --today 2099-12-31
expect "expired entry" "$tmp/allow:3: the entry for add.Tensor expired on 2099-12-31 (today is 2100-01-01)" --today 2100-01-01
cp "$lock" "$tmp/lock"
expect "stale entry" "$tmp/allow:3: stale entry: add.Tensor has no breaking difference from the lock"
printf 'add.Tensor 2099-02-30 not a date\n' > "$tmp/allow"
expect "malformed allow-list date" "$tmp/allow:1: expected an expiry date YYYY-MM-DD after the op name, found '2099-02-30'"
printf '\nadd.Tensor 2099-12-31\n' > "$tmp/allow"
expect "allow-list entry without a reason" "$tmp/allow:2: expected \`<op> <YYYY-MM-DD> <reason>\`"
: > "$tmp/allow"

# Malformed lock lines: line-numbered.
lines=$(wc -l < "$lock")
{ cat "$lock"; echo "abs(Tensor self) -> Tensor"; } > "$tmp/lock"
expect "lock line without a version" "$tmp/lock:$((lines + 1)): expected \`<MAJOR.MINOR> <schema>\`"
{ cat "$lock"; echo "1.1 abs(Tensor self -> Tensor"; } > "$tmp/lock"
expect "lock line that does not parse" "$tmp/lock:$((lines + 1)): the schema does not parse"
doctor 's/^1\.0 abs(Tensor self) -> Tensor$/1.0 abs(Tensor  self)  ->  Tensor/'
expect "lock line not canonical" "the schema is not in canonical form: expected 'abs(Tensor self) -> Tensor'"
{ cat "$lock"; echo "1.1 abs(Tensor x) -> Tensor"; } > "$tmp/lock"
expect "history with a breaking step" "abs at op set 1.1 is not a backward-compatible change of its schema at op set 1.0"

# --update: records a backward-compatible change at a new op set and keeps the old line.
# Every op set of the real lock becomes 0.9, so that 1.0 is free to record the change.
sed 's/^[0-9]*\.[0-9]* /0.9 /' "$lock" > "$tmp/lock.09"
sed 's/^\(0\.9 sum\.dim_IntList(.*\), \*, ScalarType? dtype=None)/\1)/' "$tmp/lock.09" > "$tmp/lock"
expect "lock newer than the runtime" "the lock records op set 0.9, newer than this runtime's op set 0.8" --op-set 0.8
if out=$("$tool" --update "$tmp/lock" --op-set 1.0 --emit-headers "$tmp/h" 2>&1) &&
   grep -qx '0\.9 sum\.dim_IntList(Tensor self, int\[1\]? dim, bool keepdim=False) -> Tensor' "$tmp/lock" &&
   grep -qx '1\.0 sum\.dim_IntList(Tensor self, int\[1\]? dim, bool keepdim=False, \*, ScalarType? dtype=None) -> Tensor' "$tmp/lock" &&
   grep -q '^#define TSR_OP_V0_9_sum_dim_IntList "sum.dim_IntList(Tensor self, int\[1\]? dim, bool keepdim=False) -> Tensor"$' "$tmp/h/v0_9.h" &&
   grep -q '^#define TSR_OP_SET_VERSION_MINOR 0$' "$tmp/h/opset.h"; then
  echo "ok (update keeps the history): $(printf '%s\n' "$out" | head -1)"
else
  echo "FAIL (update keeps the history):"; printf '%s\n' "$out"; status=1
fi
expect_pass "the updated lock" "ok: the registry's" --op-set 1.0
expect "op set bumped with no change" "op set 1.1 (dispatcher/op_set.h) records no change" --op-set 1.1
# The op-set headers: drift from the lock fails with the command that regenerates them, and
# two ops whose names mangle to one macro fail the generator.
cp "$lock" "$tmp/lock"
"$tool" --emit-headers "$tmp/headers" --lock "$lock" > /dev/null
sed 's/(\([0-9]*\) ops)/(0 ops)/' "$tmp/headers/v1_0.h" > "$tmp/v1_0.h" && mv "$tmp/v1_0.h" "$tmp/headers/v1_0.h"
expect "header drift" "the op-set headers are out of date: regenerate them with" --headers "$tmp/headers"
{ cat "$lock"; echo "1.0 zz_.a(Tensor self) -> Tensor"; echo "1.0 zz._a(Tensor self) -> Tensor"; } > "$tmp/lock"
if out=$("$tool" --emit-headers "$tmp/h2" --lock "$tmp/lock" 2>&1); then
  echo "FAIL (mangling collision): the generator passed"; status=1
elif ! printf '%s\n' "$out" | grep -qF "ops zz._a and zz_.a both mangle to the macro TSR_OP_V1_0_zz__a"; then
  echo "FAIL (mangling collision):"; printf '%s\n' "$out"; status=1
else
  echo "ok (mangling collision): $out"
fi
# The Tensor methods (tensor_methods.txt, beside the lock): drift of the generated declarations
# fails the check; a listed name that is no op, has no Tensor self, or is sdk::Tensor's own
# member fails the generator.
cp "$lock" "$tmp/lock"
cp "$(dirname "$lock")/tensor_methods.txt" "$tmp/tensor_methods.txt"
"$tool" --emit-headers "$tmp/headers" --sdk-ops "$tmp/ops.hpp" --lock "$tmp/lock" > /dev/null
expect_pass "generated SDK headers" "ok: the registry's" --headers "$tmp/headers" --sdk-ops "$tmp/ops.hpp"
sed 's/inline Tensor abs() const;/inline Tensor abs(int x) const;/' "$tmp/tensor_methods.inc" > "$tmp/inc" && mv "$tmp/inc" "$tmp/tensor_methods.inc"
expect "methods drift" "$tmp/tensor_methods.inc: expected what --sdk-ops writes from the lock, found another text" --headers "$tmp/headers" --sdk-ops "$tmp/ops.hpp"
expect_generator() {  # expect_generator NAME TEXT: --sdk-ops from the doctored lock and list fails with TEXT
  if out=$("$tool" --emit-headers "$tmp/h3" --sdk-ops "$tmp/ops.hpp" --lock "$tmp/lock" 2>&1); then
    echo "FAIL ($1): the generator passed"; status=1
  elif ! printf '%s\n' "$out" | grep -qF -- "$2"; then
    echo "FAIL ($1): expected '$2' in:"; printf '%s\n' "$out"; status=1
  else
    echo "ok ($1): $out"
  fi
}
cp "$(dirname "$lock")/tensor_methods.txt" "$tmp/tensor_methods.txt"
echo "zz_none" >> "$tmp/tensor_methods.txt"
expect_generator "method of no op" "tensor_methods.txt names the method zz_none, which is no op of"
cp "$(dirname "$lock")/tensor_methods.txt" "$tmp/tensor_methods.txt"
echo "arange" >> "$tmp/tensor_methods.txt"
expect_generator "method without self" "tensor_methods.txt names the method arange, whose schema has no 'Tensor self'"
cp "$(dirname "$lock")/tensor_methods.txt" "$tmp/tensor_methods.txt"
echo "add.out" >> "$tmp/tensor_methods.txt"
expect_generator "method of an out= form" "tensor_methods.txt names the method add.out, which gets no C++ function (an out= form)"
cp "$(dirname "$lock")/tensor_methods.txt" "$tmp/tensor_methods.txt"
echo "numel" >> "$tmp/tensor_methods.txt"
{ cat "$lock"; echo "1.0 numel(Tensor self) -> int"; } > "$tmp/lock"
expect_generator "method named as Tensor's member" "tensor_methods.txt names the method numel, whose name is sdk::Tensor's own member numel"
echo "abs abs_" >> "$tmp/tensor_methods.txt"
expect_generator "malformed methods line" "expected one op name (\"add.Tensor\"), found \"abs abs_\""
rm "$tmp/tensor_methods.txt"
expect_generator "no methods list" "cannot read $tmp/tensor_methods.txt (the Tensor methods' list)"
exit $status
