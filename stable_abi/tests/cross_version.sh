#!/usr/bin/env bash
# The cross-version matrix (ctest tessera_abi_cross_version; docs/abi_policy.md, "Releases and
# the cross-version matrix"). For each release in stable_abi/releases it builds that commit's
# libtessera.so (and nothing else), then runs every cell of
#   {each release's runtime, today's runtime} x {a, b, c, d, e}
# in its own process (tessera_abi_cross_version_host, a C99 application built against the
# frozen 1.0 headers) and checks each against the expectation below. Prints the matrix as a
# table; exits non-zero when a cell is not what it should be, or when a release cannot be built.
#
#   a  xv10     plugin built against stable_abi/tests/frozen/v1.0 only
#   b  xvcap    today's headers, min_abi_minor 0, capacity rule, uses the op listing (1.1) only
#               when TSR_API_HAS says the runtime has it
#   c  xvneeds  today's headers, min_abi_minor = today's minor
#   d  npu      the C++ SDK's sample plugin (sdk/examples/npu): a tensor on its device, neg, back
#   e  xvnewer  a pretend next minor (16 more descriptor bytes), needs only 1.0
#   f  xv11     plugin built against stable_abi/tests/frozen/v1.1 only, needs 1.1; its in-place
#               op runs on 1.1's packed kernel entry (its boxed entry fails if called)
#
# Expected: every cell loads and runs, except c on a runtime older than today's minor and f on
# one older than 1.1, which must be refused with a report that names both versions ("needs
# ABI >= 1.1 ... provides ABI 1.0"). b must find the op listing exactly when the runtime's
# minor is >= 1.
#
# Each release's frozen headers (stable_abi/tests/frozen/vX.Y) must declare what the release's
# commit declared: the same files, the same tokens once comments are dropped.
#
# Old runtimes are built under --work-dir/<version>/ (src/ and build/), configured once, and
# rebuilt with ninja on every run: a no-op when up to date, so a warm run costs seconds.
set -euo pipefail

usage() {
  echo "usage: $0 --source-dir DIR --work-dir DIR --cmake CMAKE --c-compiler CC --cxx-compiler CXX" \
       "--host HOST --runtime LIBTESSERA --plugin-dir DIR --npu LIBNPU" >&2
  exit 2
}

source_dir= work_dir= cmake=cmake cc= cxx= host= today_runtime= plugin_dir= npu=
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || usage
  case "$1" in
    --source-dir) source_dir=$2 ;;
    --work-dir) work_dir=$2 ;;
    --cmake) cmake=$2 ;;
    --c-compiler) cc=$2 ;;
    --cxx-compiler) cxx=$2 ;;
    --host) host=$2 ;;
    --runtime) today_runtime=$2 ;;
    --plugin-dir) plugin_dir=$2 ;;
    --npu) npu=$2 ;;
    *) usage ;;
  esac
  shift 2
done
[ -n "$source_dir" ] && [ -n "$work_dir" ] && [ -n "$host" ] && [ -n "$today_runtime" ] &&
  [ -n "$plugin_dir" ] && [ -n "$npu" ] || usage

# The matrix checks the default call path: TESSERA_PACKED_KERNELS=0 (docs/build.md) would send
# cell f to its failing boxed entry by design.
unset TESSERA_PACKED_KERNELS

log() { printf '[cross_version] %s\n' "$*"; }
die() { printf '[cross_version] FAIL: %s\n' "$*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

releases_file="$source_dir/stable_abi/releases"
[ -f "$releases_file" ] || die "$releases_file is missing"
for f in "$host" "$today_runtime" "$npu"; do
  [ -e "$f" ] || die "$f is not built (build the default target first)"
done

header="$source_dir/stable_abi/include/tessera/c/common.h"
today_major=$(sed -n 's/^#define TSR_ABI_VERSION_MAJOR \([0-9]*\)$/\1/p' "$header")
today_minor=$(sed -n 's/^#define TSR_ABI_VERSION_MINOR \([0-9]*\)$/\1/p' "$header")
[ -n "$today_major" ] && [ -n "$today_minor" ] || die "no TSR_ABI_VERSION_MAJOR/MINOR in $header"
today="$today_major.$today_minor"

# build_release VERSION COMMIT: builds the commit's libtessera.so under $work_dir/VERSION and
# sets $release_runtime to it.
#
# The tree comes from `git archive COMMIT | tar -x`, not from a git worktree: archive only reads
# the repository, so the test leaves nothing behind in .git (no worktree entry to prune when the
# build folder is deleted, no lock held by a dead run), works the same from a linked worktree
# or a clean clone, and needs no network. The tree of a commit never changes, so it is extracted
# once (into a temporary folder, renamed into place when complete) and marked with the commit;
# a different commit for the same version throws away the tree and its build.
build_release() {
  local version=$1 commit=$2
  local dir="$work_dir/$version"
  local src="$dir/src" build="$dir/build" stamp="$dir/src/.tessera-release-commit"
  local start t

  if ! git -C "$source_dir" rev-parse --git-dir >/dev/null 2>&1; then
    die "$source_dir is not a git checkout: the release $version runtime is built from commit" \
        "$commit of the repository. Run the test from a git clone."
  fi
  if ! git -C "$source_dir" cat-file -e "$commit^{commit}" 2>/dev/null; then
    local shallow
    shallow=$(git -C "$source_dir" rev-parse --is-shallow-repository 2>/dev/null || echo unknown)
    die "commit $commit (ABI $version, stable_abi/releases) is not in this repository" \
        "(shallow clone: $shallow). The cross-version test builds that release's runtime from" \
        "it: fetch the full history with 'git fetch --unshallow' (CI: check out with" \
        "fetch-depth 0), or fetch at least that commit."
  fi

  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$commit" ]; then
    start=$(now)
    rm -rf "$src" "$build" "$dir/src.tmp"
    mkdir -p "$dir/src.tmp"
    git -C "$source_dir" archive --format=tar "$commit" | tar -x -C "$dir/src.tmp"
    echo "$commit" >"$dir/src.tmp/.tessera-release-commit"
    mv "$dir/src.tmp" "$src"
    log "release $version: extracted $commit into $src ($(since "$start") s)"
  else
    log "release $version: reusing the tree of $commit in $src"
  fi

  # ccache: paths relative to the release's folder (src/ and build/ both under it), and no
  # hash of the working directory, so a fresh build folder or another clone hits the cache of
  # an earlier run (the same settings as scripts/lib/common.sh uses for the checkout).
  export CCACHE_BASEDIR="$dir" CCACHE_NOHASHDIR=1

  if [ ! -f "$build/build.ninja" ]; then
    start=$(now)
    local compilers=()
    [ -n "$cc" ] && compilers+=("-DCMAKE_C_COMPILER=$cc")
    [ -n "$cxx" ] && compilers+=("-DCMAKE_CXX_COMPILER=$cxx")
    # As released: no sanitizer, even when the build running this test has one (a sanitized
    # host and plugins load an uninstrumented runtime fine; the old code is not under test).
    if ! "$cmake" -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        "${compilers[@]}" -DTESSERA_BUILD_TESTS=OFF -DTESSERA_BUILD_BENCHMARKS=OFF \
        -DTESSERA_BUILD_FUZZERS=OFF -DTESSERA_SANITIZE= >"$dir/configure.log" 2>&1; then
      cat "$dir/configure.log" >&2
      rm -f "$build/build.ninja" # configure again next time
      die "configuring the release $version runtime failed (log above)"
    fi
    log "release $version: configured ($(since "$start") s)"
  fi
  start=$(now)
  if ! "$cmake" --build "$build" --target tessera --parallel "$(nproc)" >"$dir/build.log" 2>&1; then
    cat "$dir/build.log" >&2
    die "building the release $version runtime failed (log above)"
  fi
  t=$(since "$start")
  if grep -q "no work to do" "$dir/build.log"; then
    log "release $version: libtessera.so up to date (ninja: no work to do, $t s)"
  else
    log "release $version: built libtessera.so ($(grep -c '^\[' "$dir/build.log" || true) steps, $t s)"
  fi
  check_frozen "$version" "$src"
  release_runtime="$build/lib/libtessera.so"
  [ -e "$release_runtime" ] || die "the release $version build made no $release_runtime"
}

# check_frozen VERSION SRC: stable_abi/tests/frozen/vVERSION is the release's headers (those of
# its commit, extracted to SRC): the same files, equal once comments are dropped (the compiler's
# own tokenizer, -fpreprocessed, which expands no macro). A comment may be mended in the copy
# (1.0's parallel.h was); a declaration may not differ.
check_frozen() {
  local version=$1 src=$2
  local frozen="$source_dir/stable_abi/tests/frozen/v$version/tessera/c"
  local released="$src/stable_abi/include/tessera/c"
  local compiler=${cc:-cc} f
  [ -d "$frozen" ] || die "release $version has no frozen headers: copy stable_abi/include/tessera/c" \
    "of its commit to stable_abi/tests/frozen/v$version/tessera/c (docs/abi_policy.md)"
  if ! diff <(cd "$released" && ls) <(cd "$frozen" && ls) >"$work_dir/frozen-$version.diff"; then
    cat "$work_dir/frozen-$version.diff" >&2
    die "stable_abi/tests/frozen/v$version has other files than release $version's headers" \
        "(< the release, > the frozen copy)"
  fi
  tokens_of() { "$compiler" -fpreprocessed -dD -E -P -x c "$1" 2>/dev/null; }
  for f in "$released"/*.h; do
    f=$(basename "$f")
    if ! diff <(tokens_of "$released/$f") <(tokens_of "$frozen/$f") >"$work_dir/frozen-$version.diff"; then
      cat "$work_dir/frozen-$version.diff" >&2
      die "stable_abi/tests/frozen/v$version/tessera/c/$f differs from release $version's $f" \
          "beyond comments (< the release, > the frozen copy)"
    fi
  done
  log "release $version: frozen headers match the release's"
}

# The columns: label, plugin path, host arguments to run it.
columns=(a b c d e f)
declare -A column_name column_plugin column_args
column_name[a]="a frozen-1.0"
column_plugin[a]="$plugin_dir/libtsr_xv_plugin_frozen_v1_0.so"
column_args[a]="--op xv10::twice"
column_name[b]="b min-1.0+listing"
column_plugin[b]="$plugin_dir/libtsr_xv_plugin_capacity.so"
column_args[b]="--op xvcap::twice --listing-op xvcap::ops_listed"
column_name[c]="c needs-$today"
column_plugin[c]="$plugin_dir/libtsr_xv_plugin_needs_minor.so"
column_args[c]="--op xvneeds::twice"
column_name[d]="d sdk-npu"
column_plugin[d]="$npu"
column_args[d]="--op neg --scale -1 --device privateuse1"
column_name[e]="e newer-$today_major.$((today_minor + 1))"
column_plugin[e]="$plugin_dir/libtsr_xv_plugin_newer_minor.so"
column_args[e]="--op xvnewer::twice"
column_name[f]="f frozen-1.1"
column_plugin[f]="$plugin_dir/libtsr_xv_plugin_frozen_v1_1.so"
column_args[f]="--op xv11::twice_"
for c in "${columns[@]}"; do
  [ -e "${column_plugin[$c]}" ] || die "${column_plugin[$c]} is not built"
done

# expect RUNTIME_MINOR COLUMN: sets expect_args to the host arguments that state what the cell
# must do.
expect() {
  local minor=$1 column=$2
  expect_args=(--expect ran)
  case "$column" in
    c)
      if [ "$minor" -lt "$today_minor" ]; then
        expect_args=(--expect refused --expect-reason "needs ABI >= $today"
                     --expect-reason "provides ABI $today_major.$minor")
      fi ;;
    f) # built against the frozen 1.1 headers, needs 1.1
      if [ "$minor" -lt 1 ]; then
        expect_args=(--expect refused --expect-reason "needs ABI >= $today_major.1"
                     --expect-reason "provides ABI $today_major.$minor")
      fi ;;
    b) # the op listing is 1.1's
      if [ "$minor" -ge 1 ]; then expect_args+=(--expect-listing present); else
        expect_args+=(--expect-listing absent); fi ;;
  esac
}

mkdir -p "$work_dir"
rows=() # "label|runtime path|minor"
total_start=$(now)
# fd 3: nothing that build_release runs can eat the list from stdin.
while read -r -u 3 version commit rest; do
  case "$version" in '' | '#'*) continue ;; esac
  [ -z "${rest:-}" ] || die "stable_abi/releases: a line has more than a version and a commit"
  [[ "$version" =~ ^([0-9]+)\.([0-9]+)$ ]] || die "stable_abi/releases: bad version '$version'"
  [ "${BASH_REMATCH[1]}" = "$today_major" ] ||
    die "release $version is of another major than today's $today: this matrix crosses minors"
  minor=${BASH_REMATCH[2]}
  build_release "$version" "$commit"
  rows+=("$version (${commit:0:7})|$release_runtime|$minor")
done 3<"$releases_file"
[ ${#rows[@]} -gt 0 ] || die "stable_abi/releases lists no release"
rows+=("today ($today)|$today_runtime|$today_minor")
log "old runtimes ready ($(since "$total_start") s)"

# Run every cell; keep its outcome line for the table.
matrix_start=$(now)
failures=0
declare -A cell_line cell_ok
for row in "${rows[@]}"; do
  IFS='|' read -r label runtime minor <<<"$row"
  for c in "${columns[@]}"; do
    name="${label%% *}/$c"
    expect "$minor" "$c"
    read -r -a args <<<"${column_args[$c]}"
    echo "=== cell $name: runtime $runtime, plugin ${column_plugin[$c]}"
    set +e
    out=$("$host" --runtime "$runtime" --plugin "${column_plugin[$c]}" --cell "$name" \
          "${expect_args[@]}" "${args[@]}" 2>&1)
    rc=$?
    set -e
    echo "$out"
    line=$(grep '^cross_version cell=' <<<"$out" | tail -n 1 || true)
    if [ $rc -eq 0 ] && [[ "$line" == *"verdict=expected"* ]]; then
      cell_ok[$name]=ok
    else
      cell_ok[$name]="UNEXPECTED (exit $rc)"
      failures=$((failures + 1))
    fi
    case "$line" in
      *outcome=ran*listing=absent*) cell_line[$name]="ran, no listing" ;;
      *outcome=ran*listing=present*) cell_line[$name]="ran, listing" ;;
      *outcome=ran*) cell_line[$name]="ran" ;;
      *outcome=refused*) cell_line[$name]="refused ($(sed "s/.* code=\([A-Z_]*\).*/\1/" <<<"$line"))" ;;
      *outcome=failed*) cell_line[$name]="FAILED" ;;
      *) cell_line[$name]="CRASHED/NO RESULT" ;;
    esac
  done
done

echo
echo "Cross-version matrix (runtime x plugin; each cell: outcome, then whether it was expected)"
printf '%-16s' "runtime"
for c in "${columns[@]}"; do printf ' | %-33s' "${column_name[$c]}"; done
echo
for row in "${rows[@]}"; do
  IFS='|' read -r label runtime minor <<<"$row"
  printf '%-16s' "$label"
  for c in "${columns[@]}"; do
    name="${label%% *}/$c"
    printf ' | %-33s' "${cell_line[$name]}: ${cell_ok[$name]}"
  done
  echo
done
echo
log "matrix: ${#rows[@]} runtimes x ${#columns[@]} plugins in $(since "$matrix_start") s;" \
    "whole test $(since "$total_start") s"
if [ $failures -gt 0 ]; then
  die "$failures cell(s) not as expected (their output is above)"
fi
log "every cell as expected"
