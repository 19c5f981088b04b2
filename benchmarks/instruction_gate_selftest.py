#!/usr/bin/env python3
"""Shows that the instruction-count gate fails when it should (docs/performance.md).

Runs benchmarks/instruction_gate.py as CI does, on counts measured once (the file that the
tessera_instruction_counts test writes), against baselines doctored from them: counts lowered
by twice the threshold must fail with every workload marked REGRESSED; one workload lowered
must fail naming that workload only; counts raised by twice the threshold must pass with a
reminder to update the baseline; a change inside the threshold passes; a baseline of another
compiler is not judged (exit 77); missing or extra workloads fail. Then the update command: it
writes sorted keys, one workload per line, keeps the thresholds, and twice gives the same bytes;
and the checked-in baseline is in exactly that form, so that its diffs stay readable.

  instruction_gate_selftest.py --gate benchmarks/instruction_gate.py \\
      --measured build/benchmarks/instruction_counts.json --baseline benchmarks/baseline.json
"""

import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

failures = []


def check(name, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {name}")
    if not ok:
        failures.append(name)
        if detail:
            print("     " + detail.replace("\n", "\n     "))


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--gate", required=True)
    p.add_argument("--measured", required=True)
    p.add_argument("--baseline", required=True, help="the checked-in baseline")
    args = p.parse_args(argv)

    with open(args.measured, encoding="utf-8") as f:
        measured = json.load(f)
    with open(args.baseline, encoding="utf-8") as f:
        real_text = f.read()
    real = json.loads(real_text)
    workloads = sorted(measured["workloads"])
    threshold = float(real["threshold_percent"])
    scratch = tempfile.mkdtemp(prefix="tessera-gate-selftest-")

    def baseline_file(name, counts, **config):
        data = copy.deepcopy(real)
        for k in ("compiler", "build_type", "machine", "tool"):
            data[k] = measured[k]
        data.update(config)
        data["workloads"] = counts
        path = os.path.join(scratch, name + ".json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data, f)
        return path

    def gate(baseline, *extra):
        proc = subprocess.run([sys.executable, args.gate, "--measured", args.measured,
                               "--baseline", baseline, *extra], capture_output=True, text=True)
        return proc.returncode, proc.stdout + proc.stderr

    def scaled(factor, only=None):
        return {w: max(1, round(c * factor)) if only in (None, w) else c
                for w, c in measured["workloads"].items()}

    def row(output, workload):
        return next((line for line in output.splitlines()
                     if line.split()[:1] == [workload]), "")

    # Every workload's per-workload threshold, so a doctored count crosses its own.
    def per_workload(w):
        return float(real.get("thresholds_percent", {}).get(w, threshold))

    lowered = {w: max(1, round(c * (1 - 2 * per_workload(w) / 100)))
               for w, c in measured["workloads"].items()}
    code, out = gate(baseline_file("lowered", lowered))
    print("the gate on counts measured against a baseline lowered by 2x the threshold:")
    print("  | " + out.strip().replace("\n", "\n  | "))
    check("baseline lowered by 2x the threshold: the gate fails", code == 1, out)
    for w in workloads:
        check(f"  ... and marks {w} REGRESSED", "REGRESSED" in row(out, w), out)

    first = workloads[0]
    one = dict(measured["workloads"])
    one[first] = lowered[first]
    code, out = gate(baseline_file("one_lowered", one))
    check(f"only {first} lowered: the gate fails", code == 1, out)
    check(f"  ... naming {first} alone", "REGRESSED" in row(out, first) and
          all("REGRESSED" not in row(out, w) for w in workloads if w != first), out)

    code, out = gate(baseline_file("equal", dict(measured["workloads"])))
    check("baseline equal to the counts: the gate passes", code == 0 and "PASS" in out, out)

    inside = {w: round(c / (1 + 0.5 * per_workload(w) / 100))
              for w, c in measured["workloads"].items()}
    code, out = gate(baseline_file("inside", inside))
    check("counts half the threshold above the baseline: the gate passes", code == 0, out)

    raised = {w: round(c * (1 + 2 * per_workload(w) / 100))
              for w, c in measured["workloads"].items()}
    code, out = gate(baseline_file("raised", raised))
    check("baseline raised by 2x the threshold (an improvement): the gate passes", code == 0, out)
    check("  ... and asks for a baseline update", "update the baseline" in out and
          all("improved" in row(out, w) for w in workloads), out)

    code, out = gate(baseline_file("other_compiler", dict(measured["workloads"]),
                                   compiler="Clang 99.0.0"))
    check("baseline of another compiler: not judged (77), said plainly",
          code == 77 and "NOT JUDGED" in out and "Clang 99.0.0" in out, out)
    code, out = gate(baseline_file("other_type", lowered, build_type="Debug"))
    check("baseline of another build type: not judged even when the counts differ", code == 77,
          out)

    missing = dict(measured["workloads"])
    del missing[first]
    code, out = gate(baseline_file("missing", missing))
    check("baseline without a workload: the gate fails", code == 1 and
          f"no baseline for workload(s) {first}" in out, out)
    extra = dict(measured["workloads"], retired_workload=1000)
    code, out = gate(baseline_file("extra", extra))
    check("baseline with a workload the program lacks: the gate fails",
          code == 1 and "retired_workload" in out, out)
    bad = os.path.join(scratch, "bad.json")
    with open(bad, "w", encoding="utf-8") as f:
        f.write('{"workloads": {"add": "many"}}')
    code, out = gate(bad)
    check("a baseline with a non-integer count: an error naming it", code == 1 and
          "'add'" in out, out)

    # The update command: deterministic, readable, thresholds kept.
    target = os.path.join(scratch, "updated.json")
    with open(target, "w", encoding="utf-8") as f:
        json.dump(dict(real, build_type="Debug"), f)
    code, out = gate(target, "--update")
    with open(target, encoding="utf-8") as f:
        untouched = json.load(f)["build_type"] == "Debug"
    check("--update refuses to change the baseline's configuration without --new-config",
          code == 1 and "--new-config" in out and untouched, out)
    code, out = gate(target, "--update", "--new-config")
    with open(target, encoding="utf-8") as f:
        taken = json.load(f)["build_type"] == measured["build_type"]
    check("--update --new-config takes this build's configuration", code == 0 and taken, out)
    with open(target, "w", encoding="utf-8") as f:
        f.write(real_text)
    # From the checked-in baseline (--new-config: this build's configuration may differ).
    code1, out1 = gate(target, "--update", "--new-config")
    with open(target, encoding="utf-8") as f:
        first_bytes = f.read()
    code2, out2 = gate(target, "--update")
    with open(target, encoding="utf-8") as f:
        second_bytes = f.read()
    updated = json.loads(first_bytes)
    check("--update succeeds", code1 == 0 and code2 == 0, out1 + out2)
    check("--update writes the measured counts and configuration",
          updated["workloads"] == measured["workloads"] and
          all(updated[k] == measured[k] for k in ("compiler", "build_type", "machine", "tool")),
          first_bytes)
    check("--update keeps the thresholds", updated.get("threshold_percent") ==
          real.get("threshold_percent") and updated.get("thresholds_percent") ==
          real.get("thresholds_percent"), first_bytes)
    check("--update twice gives the same bytes", first_bytes == second_bytes)
    check("--update writes one workload per line, sorted",
          [line.strip().split('"')[1] for line in first_bytes.splitlines()
           if line.startswith('    "')] == workloads, first_bytes)
    code, out = gate(target)
    check("the updated baseline passes", code == 0, out)
    canonical = json.dumps(real, sort_keys=True, indent=2) + "\n"
    check(f"{args.baseline} is in the update command's form (edit it only with that command)",
          real_text == canonical)

    shutil.rmtree(scratch, ignore_errors=True)
    if failures:
        print(f"\n{len(failures)} check(s) failed")
        return 1
    print("\nthe gate fails, passes and updates as documented")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
