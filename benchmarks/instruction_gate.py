#!/usr/bin/env python3
"""The "not slower" gate: instructions per call of fixed micro workloads, under callgrind.

Runs each workload of tessera_instruction_workloads under `valgrind --tool=callgrind`, divides
the instructions of its measured region by its calls, and compares them with
benchmarks/baseline.json. A workload more than the baseline's threshold above its baseline
fails the gate; one more than the threshold below it passes with a reminder to update the
baseline. docs/performance.md says what each workload measures, why the threshold is what it
is, and how to update the baseline.

  instruction_gate.py --workloads build/bin/tessera_instruction_workloads \\
      --compiler "GNU 12.2.0" --build-type RelWithDebInfo            # measure and compare
  ... --save counts.json          # also write what was measured (the baseline's format)
  ... --save counts.json --no-compare   # only measure
  ... --measured counts.json      # compare counts measured earlier instead of measuring
  ... --update                    # rewrite the baseline from this build's counts
  ... --update --new-config       # the same when CI's compiler or build type changed
  ... --repeat 5                  # measure each workload 5 times; print the spread

Exit status: 0 pass, 1 a regression (or an error), 77 the baseline belongs to another compiler,
build type or machine, so the counts are not judged (ctest shows the gate as skipped).
Only the Python 3 standard library is used.
"""

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_NOT_COMPARABLE = 77

# Calls measured per workload: enough that one-off costs inside the region (a buffer growing,
# a periodic clean-up) average out, few enough that a run stays short under callgrind.
ITERATIONS = {"plugin_load": 10}
DEFAULT_ITERATIONS = 2000

# The environment each workload runs in, and nothing else: the same on every machine (no
# TESSERA_PLUGIN_PATH, trace or log settings leak in), one thread, so that no thread pool
# spins and the count does not depend on scheduling.
WORKLOAD_ENV = {
    "PATH": "/usr/bin:/bin",
    "LC_ALL": "C",
    "TESSERA_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
}

CALLGRIND_FLAGS = [
    "--tool=callgrind",
    "--instr-atstart=no",  # the program starts instrumentation around its measured region
    "-q",
]

CONFIG_KEYS = ("compiler", "build_type", "machine", "tool")


class GateError(Exception):
    pass


def log(message):
    print(message, flush=True)


def list_workloads(program):
    out = subprocess.run([program, "--list"], check=True, capture_output=True, text=True,
                         env=WORKLOAD_ENV).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def read_callgrind_total(path):
    """The Ir total of a callgrind output file ("totals:" or, in older files, "summary:")."""
    total = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"^(totals|summary):\s+(\d+)", line)
            if m:
                total = int(m.group(2))
                if m.group(1) == "totals":
                    break
    if total is None:
        raise GateError(f"{path}: no 'totals:' line (not a callgrind output file?)")
    return total


def measure_once(valgrind, program, workload, iterations, scratch):
    out_file = os.path.join(scratch, f"callgrind.{workload}.out")
    if os.path.exists(out_file):
        os.remove(out_file)
    cmd = [valgrind, *CALLGRIND_FLAGS, f"--callgrind-out-file={out_file}", program, workload,
           str(iterations)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=WORKLOAD_ENV)
    if proc.returncode != 0:
        raise GateError(f"workload '{workload}' failed under callgrind (exit {proc.returncode}):\n"
                        f"$ {' '.join(cmd)}\n{proc.stdout}{proc.stderr}")
    if "calls measured" not in proc.stdout:
        raise GateError(
            f"workload '{workload}': the program did not mark its measured region (built without "
            f"valgrind/callgrind.h? install valgrind, scripts/lib/common.sh, and reconfigure); "
            f"its output was:\n{proc.stdout}{proc.stderr}")
    return read_callgrind_total(out_file) / iterations


def measure(valgrind, program, workloads, repeat):
    counts, spreads = {}, {}
    scratch = tempfile.mkdtemp(prefix="tessera-instruction-gate-")
    try:
        for workload in workloads:
            iterations = ITERATIONS.get(workload, DEFAULT_ITERATIONS)
            runs = [measure_once(valgrind, program, workload, iterations, scratch)
                    for _ in range(repeat)]
            counts[workload] = round(min(runs))
            spreads[workload] = runs
            detail = ""
            if repeat > 1:
                lo, hi = min(runs), max(runs)
                detail = (f"  ({repeat} runs: min {lo:.1f}, max {hi:.1f}, "
                          f"spread {100.0 * (hi - lo) / lo:.3f}%)")
            log(f"  {workload:<12} {counts[workload]:>12,} instructions per call, "
                f"{iterations} calls{detail}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return counts, spreads


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise GateError(f"{path}: no such file")
    except json.JSONDecodeError as e:
        raise GateError(f"{path}: not valid JSON: {e}")
    if not isinstance(data, dict) or not isinstance(data.get("workloads"), dict):
        raise GateError(f"{path}: expected an object with a 'workloads' object")
    for name, value in data["workloads"].items():
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise GateError(f"{path}: workload '{name}': expected a positive integer count, "
                            f"got {value!r}")
    return data


def dump_json(data):
    """The one way these files are written: sorted keys, one workload per line, so that an
    update's diff shows exactly the counts that changed."""
    return json.dumps(data, sort_keys=True, indent=2) + "\n"


def threshold_of(baseline, workload):
    per_workload = baseline.get("thresholds_percent", {})
    value = per_workload.get(workload, baseline.get("threshold_percent"))
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise GateError(f"the baseline states no positive threshold_percent for '{workload}'")
    return float(value)


def describe(config):
    return ", ".join(f"{k} {config.get(k, '?')}" for k in CONFIG_KEYS)


def compare(baseline, measured, baseline_path):
    """Prints the table and returns the exit status."""
    mismatch = [k for k in CONFIG_KEYS if baseline.get(k) != measured.get(k)]
    base, now = baseline["workloads"], measured["workloads"]
    missing = sorted(set(now) - set(base))
    stale = sorted(set(base) - set(now))

    rows, regressed, improved = [], [], []
    for workload in sorted(set(base) & set(now)):
        threshold = threshold_of(baseline, workload)
        change = 100.0 * (now[workload] - base[workload]) / base[workload]
        if change > threshold:
            verdict = "REGRESSED"
            regressed.append(workload)
        elif change < -threshold:
            verdict = "improved"
            improved.append(workload)
        else:
            verdict = "ok"
        rows.append((workload, f"{base[workload]:,}", f"{now[workload]:,}", f"{change:+.2f}%",
                     f"{threshold:g}%", verdict))

    header = ("workload", "baseline", "measured", "change", "threshold", "")
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    log("")
    log("instructions per call (callgrind), against " + baseline_path + ":")
    for r in [header] + rows:
        log("  " + "  ".join(str(c).ljust(w) if i in (0, 5) else str(c).rjust(w)
                             for i, (c, w) in enumerate(zip(r, widths))).rstrip())
    log("")

    if mismatch:
        log("NOT JUDGED: the baseline's counts belong to another configuration, so these counts "
            "are not comparable with them.")
        log(f"  baseline:   {describe(baseline)}")
        log(f"  this build: {describe(measured)}")
        log("  The gate judges only the configuration the baseline was measured with (CI's). If "
            "this is CI's configuration from now on, update the baseline (docs/performance.md).")
        return EXIT_NOT_COMPARABLE
    status = EXIT_PASS
    if missing:
        log(f"FAIL: no baseline for workload(s) {', '.join(missing)}: add them with the update "
            "command (docs/performance.md).")
        status = EXIT_FAIL
    if stale:
        log(f"FAIL: the baseline names workload(s) {', '.join(stale)} that the program does not "
            "have: update the baseline (docs/performance.md).")
        status = EXIT_FAIL
    if regressed:
        log(f"FAIL: {', '.join(regressed)} regressed beyond the threshold. Find the cause (the "
            "workload is in benchmarks/instruction_workloads.c; callgrind_annotate shows where "
            "the instructions go, docs/performance.md); if the cost is intended, update the "
            "baseline in the same change and say why in its message.")
        status = EXIT_FAIL
    if improved:
        log(f"NOTE: {', '.join(improved)} improved beyond the threshold: update the baseline "
            "(docs/performance.md) so that the gate holds the new level.")
    if status == EXIT_PASS:
        log("PASS: no workload regressed beyond its threshold.")
    return status


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workloads", help="the tessera_instruction_workloads program")
    p.add_argument("--baseline", default=os.path.join(here, "baseline.json"))
    p.add_argument("--compiler", help='the compiler the program was built with, e.g. "GNU 12.2.0"')
    p.add_argument("--build-type", help="the program's build type, e.g. RelWithDebInfo")
    p.add_argument("--valgrind", default="valgrind")
    p.add_argument("--only", help="comma-separated workloads to run (default: all)")
    p.add_argument("--repeat", type=int, default=1,
                   help="measure each workload N times; the minimum counts (default 1)")
    p.add_argument("--save", help="write the measured counts to this file")
    p.add_argument("--measured", help="compare the counts of this file instead of measuring")
    p.add_argument("--no-compare", action="store_true",
                   help="only measure (with --save): do not read the baseline")
    p.add_argument("--update", action="store_true",
                   help="rewrite the baseline with the measured counts (keeps its thresholds)")
    p.add_argument("--new-config", action="store_true",
                   help="with --update: accept another compiler, build type or machine than "
                        "the baseline's")
    args = p.parse_args(argv)

    config = {"compiler": args.compiler, "build_type": args.build_type,
              "machine": platform.machine(), "tool": "callgrind"}
    try:
        if args.measured:
            measured = load_json(args.measured)
            log(f"counts measured earlier: {args.measured} ({describe(measured)})")
        else:
            if not (args.workloads and args.compiler and args.build_type):
                raise GateError("--workloads, --compiler and --build-type are required unless "
                                "--measured is given")
            valgrind = shutil.which(args.valgrind)  # absolute: the workloads' PATH is fixed
            if valgrind is None:
                raise GateError(f"'{args.valgrind}' not found: install valgrind (it is in "
                                "scripts/lib/common.sh's package list)")
            if args.save and os.path.exists(args.save):
                os.remove(args.save)  # never leave counts of an earlier build behind
            workloads = list_workloads(args.workloads)
            if args.only:
                wanted = args.only.split(",")
                unknown = sorted(set(wanted) - set(workloads))
                if unknown:
                    raise GateError(f"unknown workload(s) {', '.join(unknown)}; the program has "
                                    f"{', '.join(workloads)}")
                workloads = [w for w in workloads if w in wanted]
            log(f"measuring {len(workloads)} workloads under callgrind ({describe(config)}):")
            counts, _ = measure(valgrind, os.path.abspath(args.workloads), workloads, args.repeat)
            measured = dict(config, workloads=counts)
        if args.save:
            with open(args.save, "w", encoding="utf-8") as f:
                f.write(dump_json(measured))

        if args.no_compare:
            return EXIT_PASS
        if args.update:
            if args.only:
                raise GateError("--update rewrites every workload: leave out --only")
            try:
                old = load_json(args.baseline)
            except GateError:
                old = {}
            changed = [k for k in CONFIG_KEYS if k in old and old[k] != measured[k]]
            if changed and not args.new_config:
                raise GateError(
                    f"the baseline's counts belong to {describe(old)}; this build is "
                    f"{describe(measured)}. The baseline holds CI's configuration (GCC, "
                    "RelWithDebInfo: scripts/test.sh): update it from such a build, or pass "
                    "--new-config if CI's configuration changes")
            new = {k: v for k, v in old.items() if k not in ("workloads",) + CONFIG_KEYS}
            new.setdefault("threshold_percent", 2)
            new.setdefault("about", "Instructions per call of benchmarks/instruction_workloads.c "
                           "under callgrind; written by the update command, see "
                           "docs/performance.md")
            new.update({k: measured[k] for k in CONFIG_KEYS})
            new["workloads"] = measured["workloads"]
            with open(args.baseline, "w", encoding="utf-8") as f:
                f.write(dump_json(new))
            log(f"updated {args.baseline}; review its diff and commit it with the change that "
                "moved the counts.")
            return EXIT_PASS

        baseline = load_json(args.baseline)
        if args.only:
            measured = dict(measured)
            baseline = dict(baseline, workloads={k: v for k, v in baseline["workloads"].items()
                                                 if k in measured["workloads"]})
        return compare(baseline, measured, args.baseline)
    except GateError as e:
        log(f"error: {e}")
        return EXIT_FAIL
    except subprocess.CalledProcessError as e:
        log(f"error: {' '.join(e.cmd)} exited with {e.returncode}:\n{e.stdout}{e.stderr}")
        return EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
