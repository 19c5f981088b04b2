#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) into build-fuzz/ with clang, ASan and UBSan, and runs
# each for a fixed time on a copy of its seed corpus (fuzz/corpus/<target>/); exits non-zero
# when any target finds a crash, a sanitizer report, a timeout or runs out of memory.
#
#   scripts/fuzz.sh                        # every target, 30 s each (what scripts/test.sh runs)
#   scripts/fuzz.sh --seconds 3600         # the long run
#   scripts/fuzz.sh --seconds 300 op_call  # one target
#   scripts/fuzz.sh --runs 50000 --seed 1  # a fixed number of inputs from a fixed seed: the same
#                                          # inputs every time (what scripts/test.sh runs in CI)
#
# Targets: schema_parser, op_define, op_call, op_meta, plugin_desc, model_load. The corpus in
# the tree is never written; inputs a run finds new coverage with stay in its temporary copy
# (printed at the end; pass --keep-corpus DIR to keep them). A crashing input is saved to
# build-fuzz/fuzz-artifacts/<target>/ and its replay command printed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

seconds=30
runs=""
seed=""
keep_corpus=""
targets=()
all_targets=(schema_parser op_define op_call op_meta plugin_desc model_load)
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds)
      seconds="$2"
      shift 2
      ;;
    --runs)
      runs="$2"
      shift 2
      ;;
    --seed)
      seed="$2"
      shift 2
      ;;
    --keep-corpus)
      keep_corpus="$2"
      shift 2
      ;;
    -h | --help)
      sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    -*)
      tessera_log "unknown option $1 (see --help)"
      exit 2
      ;;
    *)
      targets+=("$1")
      shift
      ;;
  esac
done
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  tessera_log "--seconds wants a positive whole number of seconds, got '$seconds'"
  exit 2
fi
for value in "$runs" "$seed"; do
  if [ -n "$value" ] && ! [[ "$value" =~ ^[1-9][0-9]*$ ]]; then
    tessera_log "--runs and --seed want a positive whole number, got '$value'"
    exit 2
  fi
done
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for target in "${targets[@]}"; do
  if [ ! -d "$TESSERA_ROOT/fuzz/corpus/$target" ]; then
    tessera_log "unknown fuzz target '$target'; expected one of: ${all_targets[*]}"
    exit 2
  fi
done

tessera_install_packages
fuzz_dir="${TESSERA_ROOT}/build-fuzz"
cd "$TESSERA_ROOT"
if [ ! -f "$fuzz_dir/build.ninja" ]; then
  cmake -S . -B "$fuzz_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DTESSERA_BUILD_FUZZERS=ON \
    -DTESSERA_BUILD_TESTS=OFF -DTESSERA_BUILD_BENCHMARKS=OFF
fi
# Only the fuzzers and what they load (the runtime, the CPU plugin, the fuzz plugin).
cmake --build "$fuzz_dir" --target tessera_fuzzers --parallel "$(nproc)"

work="$(mktemp -d "${TMPDIR:-/tmp}/tessera-fuzz.XXXXXX")"
failed=()
for target in "${targets[@]}"; do
  binary="$fuzz_dir/bin/tessera_fuzz_$target"
  corpus="$work/$target"
  artifacts="$fuzz_dir/fuzz-artifacts/$target"
  mkdir -p "$corpus" "$artifacts"
  cp -r "$TESSERA_ROOT/fuzz/corpus/$target/." "$corpus/"
  args=(-timeout=10 -rss_limit_mb=4096 -print_final_stats=1
    -artifact_prefix="$artifacts/")
  # The runtime keeps some memory per input for the process by design (every op ever defined,
  # every load report, every kernel ever registered: fuzz/*.options), a few KB, so one process
  # is good for a minute or two at full speed, not an hour: long runs go in rounds of at most
  # 60 s, each a fresh process on the corpus the rounds before it grew.
  round_seconds=60
  if [ -f "$TESSERA_ROOT/fuzz/$target.dict" ]; then
    args+=(-dict="$TESSERA_ROOT/fuzz/$target.dict")
  fi
  # fuzz/<target>.options: the target's own libFuzzer flags, one a line ('#' comments why).
  if [ -f "$TESSERA_ROOT/fuzz/$target.options" ]; then
    while read -r flag; do
      [ -n "$flag" ] && args+=("$flag")
    done < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$TESSERA_ROOT/fuzz/$target.options")
  fi
  [ -z "$seed" ] || args+=(-seed="$seed")
  if [ -n "$runs" ]; then
    # A fixed number of inputs in one round: deterministic for a given seed, corpus and build.
    # --seconds stays a cap, generous by default (a slow machine stops early, never fails).
    args+=(-runs="$runs")
    round_seconds="$seconds"
  fi
  tessera_log "fuzzing $target for ${runs:-${seconds} s of} inputs (at most ${seconds} s) on \
$(ls "$corpus" | wc -l) seed inputs"
  # One thread in the runtime and in oneDNN: inputs replay the same way, and CI has 2 cores.
  left="$seconds"
  round=0
  while [ "$left" -gt 0 ]; do
    now=$((left < round_seconds ? left : round_seconds))
    left=$((left - now))
    round=$((round + 1))
    if TESSERA_NUM_THREADS=1 OMP_NUM_THREADS=1 "$binary" "${args[@]}" -max_total_time="$now" \
        "$corpus" >"$work/$target.$round.log" 2>&1; then
      grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)|DONE' \
        "$work/$target.$round.log" | sed "s/^/[tessera]   $target (round $round): /" >&2 || true
    else
      tail -n 60 "$work/$target.$round.log" >&2
      tessera_log "fuzz target $target FAILED; the input is in $artifacts/; replay it with:"
      tessera_log "  $binary $artifacts/<crash-file>"
      failed+=("$target")
      break
    fi
  done
  # The unboxed fast path against the boxed one (Note [The unboxed fast path] in
  # dispatcher/unboxed_call.cc): every input of the grown op_call corpus replayed once with
  # each, and the transcripts (each call's error or returns, fuzz/op_call_fuzzer.cc) compared.
  if [ "$target" = op_call ] && [[ " ${failed[*]:-} " != *" op_call "* ]]; then
    for path in fast boxed; do
      fast_path=1
      [ "$path" = boxed ] && fast_path=0
      rm -f "$work/op_call.$path.transcript"
      # Each input file once (libFuzzer runs the files it is given); no leak check, which
      # reruns an input whose allocations look unbalanced, and which ones depends on the path.
      # A minute per input, not the fuzzing's 10 s: each xargs batch starts a process whose first
      # input also loads the plugin under ASan (a fraction of a second here, but 10 s on a loaded
      # machine: seen here at load 4.5 on 2 cores), and hangs are the fuzzing's to find.
      if ! find "$corpus" -type f -print0 | sort -z | TESSERA_FAST_PATH=$fast_path \
          TESSERA_FUZZ_TRANSCRIPT="$work/op_call.$path.transcript" TESSERA_NUM_THREADS=1 \
          OMP_NUM_THREADS=1 xargs -0 "$binary" -detect_leaks=0 -timeout=60 -rss_limit_mb=4096 \
          >"$work/op_call.$path.log" 2>&1; then
        # xargs runs libFuzzer in batches and goes on after a failing one, so the log's tail
        # may be a later batch's success: show the first report and the input that ran into it.
        # (Not ASan's "failed to allocate" warning: a refused allocation is an outcome inputs
        # are meant to reach, max_allocation_size_mb in fuzz/op_call_fuzzer.cc.)
        pattern='==[0-9]+==ERROR|^SUMMARY: |runtime error: |deadly signal|ALARM: '
        pattern+='|out-of-memory \(|Timeout'
        report=$(grep -n -m1 -E "$pattern" "$work/op_call.$path.log" | cut -d: -f1 || true)
        if [ -n "$report" ]; then
          input=$(head -n "$report" "$work/op_call.$path.log" | grep '^Running: ' |
            tail -n 1 || true)
          tessera_log "  the first report, at line $report of the log; the input: ${input:-unknown}"
          sed -n "$((report > 5 ? report - 5 : 1)),$((report + 40))p" \
            "$work/op_call.$path.log" >&2
          input_file=${input#Running: }
          if [ -n "$input" ] && [ -f "$input_file" ]; then
            mkdir -p "$artifacts"
            cp "$input_file" "$artifacts/replay-$path-$(basename "$input_file")"
            tessera_log "  kept as $artifacts/replay-$path-$(basename "$input_file")"
          fi
        else
          tail -n 30 "$work/op_call.$path.log" >&2
        fi
        tessera_log "replaying the op_call corpus on the $path path FAILED"
        failed+=("op_call-$path-replay")
        continue 2
      fi
      sort -u -o "$work/op_call.$path.transcript" "$work/op_call.$path.transcript"
    done
    calls=$(wc -l <"$work/op_call.fast.transcript")
    if cmp -s "$work/op_call.fast.transcript" "$work/op_call.boxed.transcript"; then
      tessera_log "  op_call: the fast and boxed paths agree on all $calls corpus inputs"
    else
      diff "$work/op_call.boxed.transcript" "$work/op_call.fast.transcript" | head -n 20 >&2
      tessera_log "op_call: the fast path (TESSERA_FAST_PATH unset) and the boxed path \
(TESSERA_FAST_PATH=0) differ on the inputs above (< boxed, > fast)"
      failed+=("op_call-paths")
    fi
  fi
done

if [ -n "$keep_corpus" ]; then
  mkdir -p "$keep_corpus"
  cp -r "$work/." "$keep_corpus/"
  tessera_log "corpora and logs kept in $keep_corpus"
fi
rm -rf "$work"
if [ ${#failed[@]} -gt 0 ]; then
  tessera_log "fuzzing failed: ${failed[*]}"
  exit 1
fi
tessera_log "fuzzing passed: ${targets[*]} (${seconds} s each)"
