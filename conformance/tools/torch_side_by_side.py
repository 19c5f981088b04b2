#!/usr/bin/python3
"""Replays the cases written by tessera_dump_cases through PyTorch and compares.

The conformance suite's references are our reading of PyTorch (issue 9); this audit asks
PyTorch itself. Each JSON line holds an op of the database, the arguments of one sample in
schema order and Tessera's returns (or its error); this script calls
torch.ops.aten.<name>.<overload> with the same arguments and compares: error or not, dtype,
shape, and values within torch.testing.assert_close's default tolerance for the dtype (exact
for integers and bool, NaN equal to NaN).

A development aid only: Tessera never depends on PyTorch. Run it with Debian's python3-torch
interpreter, /usr/bin/python3 (docs/conformance.md, "Side by side with PyTorch"):

  build/bin/tessera_dump_cases --out /tmp/cases.jsonl
  /usr/bin/python3 conformance/tools/torch_side_by_side.py /tmp/cases.jsonl

It prints a summary per op and writes every disagreement with a one-line repro to
--disagreements (default: the input's name + .disagreements.txt). The exit code is 0 whatever
the audit finds (it is an audit, not a test), 2 when the input cannot be read.
"""

import argparse
import collections
import json
import math
import os
import pickle
import re
import signal
import sys
import traceback

try:
    import torch
except ImportError:
    sys.stderr.write(
        "torch_side_by_side: PyTorch is not importable by %s; use Debian's /usr/bin/python3 "
        "with python3-torch\n" % sys.executable)
    sys.exit(2)

DTYPES = {
    "bool": torch.bool,
    "uint8": torch.uint8,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}

# Outcomes of one case.
AGREE = "agree"
DISAGREE = "disagree"
TORCH_ONLY_ERROR = "torch_only_error"  # PyTorch refuses what Tessera computes
TESSERA_ONLY_ERROR = "tessera_only_error"  # Tessera refuses what PyTorch computes
NOT_IN_TORCH = "not_in_torch"  # no such aten op in this PyTorch: nothing to compare
NOT_IN_TESSERA = "not_in_tessera"  # --replay of a case for an op Tessera lacks
TOOL_ERROR = "tool_error"  # this script could not compare the case (a bug here, not a finding)
TORCH_CRASH = "torch_crash"  # PyTorch itself died on the case (its bug; Tessera's side is shown)

# Cases run in forked children, one per op and at most this many cases each
# (Note [Isolating PyTorch]).
CASES_PER_CHILD = 400
# A child that failed in this script (an exception, printed) exits with this status; a child
# that PyTorch killed dies of a signal, or exits with PyTorch's own status.
CHILD_TOOL_FAILURE = 97
TOOL_FAILED = "tool failure"

# Ops whose values are unspecified (uninitialized memory): only dtype and shape compare.
UNSPECIFIED_VALUES = re.compile(r"^empty")


def draws_random_numbers(case):
    """A case with a generator: Tessera's numbers are Philox's (docs/random.md), PyTorch's CPU
    generator draws others, so only dtypes, shapes and refusals can agree."""
    return any(a["kind"] == "generator" for a in case["args"])


def number(v):
    """A JSON value back to a float: the dumper writes NaN and infinities as strings."""
    if isinstance(v, str):
        return float(v)  # "nan", "inf", "-inf"
    return v


def make_tensor(t):
    dtype = DTYPES[t["dtype"]]
    values = [number(v) for v in t["values"]]
    if dtype == torch.bool:
        values = [v != 0 for v in values]
    elif not dtype.is_floating_point:
        # Values travel as doubles (HostTensor): an int64 extreme such as 2**63 - 1 arrives as
        # 2**63; clamp it into the dtype rather than fail (beyond 2**53 values are approximate).
        info = torch.iinfo(dtype)
        values = [min(max(int(v), info.min), info.max) for v in values]
    return torch.tensor(values, dtype=dtype).reshape(t["shape"])


def torch_value(arg):
    kind = arg["kind"]
    if kind == "tensor":
        return make_tensor(arg)
    if kind == "tensor_list":  # null: None in a Tensor?[] (index.Tensor's indices)
        return [None if t is None else make_tensor(t) for t in arg["tensors"]]
    if kind == "scalar":
        v = number(arg["value"])
        return {"int": int, "bool": bool}.get(arg["scalar_kind"], float)(v)
    if kind == "int":
        return int(arg["value"])
    if kind == "bool":
        return bool(arg["value"])
    if kind == "double":
        return float(number(arg["value"]))
    if kind == "int_list":
        return [int(v) for v in arg["value"]]
    if kind == "bool_list":
        return [bool(v) for v in arg["value"]]
    if kind == "string":
        return arg["value"]
    if kind == "none":
        return None
    if kind == "dtype":
        return DTYPES[arg["value"]]
    if kind == "device":
        return torch.device("cpu")  # the dumper runs Tessera's CPU backend
    if kind == "generator":  # the seed only: PyTorch's CPU generator is no counter-based one
        return torch.Generator().manual_seed(int(arg["seed"]))
    raise ValueError("unknown argument kind %r" % kind)


def parse_int(text):
    """JSON integers stay exact Python ints, except "-0", a float's negative zero (json reads it
    as int 0, which would lose the sign that 1/x and atan2 see)."""
    return -0.0 if text == "-0" else int(text)


def load(line):
    return json.loads(line, parse_int=parse_int)


def bool_scalar_workaround(case):
    """(op name, args) to call instead where a Scalar argument is a bool.

    The torch.ops binding of PyTorch 1.13 turns a Python bool given for a Scalar into an int
    Scalar (bool is an int in Python), so add.Scalar(bool tensor, True) computes int64 there,
    while ATen itself (and torch.add) keeps the bool. ATen implements each X.Scalar as X.Tensor
    with the scalar wrapped in a 0-dim tensor; a bool 0-dim tensor promotes exactly as a bool
    scalar does (bool is the lowest category), so X.Tensor with a 0-dim bool tensor gives ATen's
    answer. Returns None when no argument is a bool Scalar or no such overload exists.
    """
    if not any(a["kind"] == "scalar" and a["scalar_kind"] == "bool" for a in case["args"]):
        return None
    name, _, overload = case["op"].partition(".")
    if "Scalar" not in overload:
        return None
    alternative = name + "." + overload.replace("Scalar", "Tensor")
    if resolve(alternative) is None:
        return None
    args = []
    for a in case["args"]:
        if a["kind"] == "scalar" and a["scalar_kind"] == "bool":
            a = {"name": a["name"], "kind": "tensor", "dtype": "bool", "shape": [],
                 "values": [a["value"]]}
        args.append(a)
    return alternative, args


def resolve(op_name):
    """torch.ops.aten.<name>.<overload>, or None where this PyTorch lacks it."""
    name, _, overload = op_name.partition(".")
    try:
        packet = getattr(torch.ops.aten, name)
        return getattr(packet, overload or "default")
    except (AttributeError, RuntimeError):
        return None


def bind(op, args):
    """Positional and keyword arguments for `op` from the dumped arguments.

    Each argument goes where the torch schema has the same name: positionally for a
    non-keyword-only argument, by name for a keyword-only one. An argument whose name the
    torch schema lacks keeps its position (noted, as a schema difference).
    """
    schema_args = list(op._schema.arguments)
    index = {a.name: i for i, a in enumerate(schema_args)}
    positional, keywords, notes = {}, {}, []
    for i, arg in enumerate(args):
        value = torch_value(arg)
        j = index.get(arg["name"])
        if j is None:
            notes.append("argument %d '%s' is not in torch's schema" % (i, arg["name"]))
            j = i
            if j >= len(schema_args):
                raise TypeError("argument %d '%s': torch's schema has only %d arguments" %
                                (i, arg["name"], len(schema_args)))
        if schema_args[j].kwarg_only:
            keywords[schema_args[j].name] = value
        else:
            positional[j] = value
    pos = []
    for j in range(max(positional) + 1 if positional else 0):
        if j in positional:
            pos.append(positional[j])
        else:  # a positional argument Tessera's sample skipped: PyTorch's default
            pos.append(schema_args[j].default_value)
            notes.append("torch's positional argument '%s' filled with its default" %
                         schema_args[j].name)
    return pos, keywords, notes


def outputs_of(result):
    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, (tuple, list)):
        out = []
        for r in result:
            out.extend(outputs_of(r))
        return out
    # A host value (equal's bool, item's Scalar): a 0-dim tensor of its kind, as the suite
    # compares it (bool, int64, float64; torch.tensor would make a float a float32).
    dtype = (torch.bool if isinstance(result, bool) else
             torch.int64 if isinstance(result, int) else torch.float64)
    return [torch.tensor(result, dtype=dtype)]


def compare(case, tessera_outs, torch_outs):
    """None when they agree, else what differs."""
    n = case.get("compare_returns", -1)
    if n is None or n < 0:
        if len(tessera_outs) != len(torch_outs):
            return "%d returns from Tessera, %d from torch" % (len(tessera_outs), len(torch_outs))
        n = len(torch_outs)
    for k in range(min(n, len(tessera_outs), len(torch_outs))):
        mine, theirs = tessera_outs[k], torch_outs[k]
        what = "return %d: " % k if n > 1 else ""
        if DTYPES[mine["dtype"]] != theirs.dtype:
            return "%sdtype: torch %s, Tessera %s" % (what, DTYPE_NAMES.get(
                theirs.dtype, theirs.dtype), mine["dtype"])
        if list(theirs.shape) != list(mine["shape"]):
            return "%sshape: torch %s, Tessera %s" % (what, list(theirs.shape), mine["shape"])
        if UNSPECIFIED_VALUES.search(case["op"]) or draws_random_numbers(case):
            continue
        actual = make_tensor(mine)
        try:
            torch.testing.assert_close(actual, theirs.detach().contiguous(), equal_nan=True,
                                       check_stride=False)
        except AssertionError as e:
            if k == 1 and indices_of_equal_values(case, actual, torch_outs[0]):
                continue
            return "%svalues: %s; torch %s, Tessera %s" % (what, first_line_of_mismatch(e),
                                                          short(theirs), short(actual))
    return None


# Ops whose second return holds the indices of the first's values along `dim`: where values
# tie, either index is right (sort is not stable, topk's order of equals is unspecified).
INDEX_RETURNS = {"sort", "topk"}


def indices_of_equal_values(case, indices, values):
    """True when Tessera's indices pick torch's values from self: they differ only in ties."""
    if case["op"].partition(".")[0] not in INDEX_RETURNS or indices.dtype != torch.int64:
        return False
    args = {a["name"]: a for a in case.get("args", [])}
    dim = int(args["dim"]["value"]) if "dim" in args and args["dim"]["kind"] == "int" else -1
    try:
        picked = torch.gather(make_tensor(case["args"][0]), dim, indices)
        torch.testing.assert_close(picked, values, equal_nan=True, check_stride=False,
                                   rtol=0, atol=0)
    except (AssertionError, RuntimeError, IndexError):
        return False
    return True


def first_line_of_mismatch(e):
    lines = [l.strip() for l in str(e).splitlines() if l.strip()]
    keep = [l for l in lines if l.startswith(("Mismatched", "Greatest"))]
    return " ".join(keep or lines[:1])


def short(t, limit=12):
    flat = t.reshape(-1).tolist()
    text = ", ".join(fmt(v) for v in flat[:limit])
    return "[" + text + (", ...%d more" % (len(flat) - limit) if len(flat) > limit else "") + "]"


def fmt(v):
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    return str(v)


def py_literal(v):
    """Python source for a number that round-trips, NaN and infinities included."""
    if isinstance(v, float) and not math.isfinite(v):
        return "float('%s')" % ("nan" if math.isnan(v) else "inf" if v > 0 else "-inf")
    return repr(v)


def repro_value(arg):
    kind = arg["kind"]
    if kind == "tensor":
        values = make_tensor(arg).reshape(-1).tolist()
        return "torch.tensor([%s], dtype=torch.%s).reshape(%s)" % (", ".join(
            py_literal(v) for v in values), arg["dtype"], arg["shape"])
    if kind == "tensor_list":
        return "[%s]" % ", ".join("None" if t is None else repro_value(dict(t, kind="tensor"))
                                  for t in arg["tensors"])
    if kind == "dtype":
        return "torch." + arg["value"]
    if kind == "device":
        return "'cpu'"
    if kind == "generator":
        return "torch.Generator().manual_seed(%s)" % arg["seed"]
    return py_literal(torch_value(arg))


def repro(case, op):
    """One line of Python that makes PyTorch's side of the case."""
    schema_args = list(op._schema.arguments) if op is not None else []
    by_name = {a.name: a for a in schema_args}
    parts = []
    for arg in case.get("torch_args", case["args"]):
        text = repro_value(arg)
        a = by_name.get(arg["name"])
        parts.append("%s=%s" % (arg["name"], text) if a is not None and a.kwarg_only else text)
    name, _, overload = case.get("torch_op", case["op"]).partition(".")
    return "torch.ops.aten.%s.%s(%s)" % (name, overload or "default", ", ".join(parts))


def run_case(case):
    """(outcome, detail, notes, op) for one case."""
    op = resolve(case["op"])
    if op is None:
        return NOT_IN_TORCH, "torch has no aten op %s" % case["op"], [], None
    notes, torch_args = [], case["args"]
    workaround = bool_scalar_workaround(case)
    if workaround is not None:
        case["torch_op"], case["torch_args"] = workaround
        op, torch_args = resolve(workaround[0]), workaround[1]
        notes = ["a bool Scalar: called as %s with a 0-dim bool tensor (torch.ops would make "
                 "the bool an int)" % workaround[0]]
    # Arguments this script cannot build are its own failure (TOOL_ERROR), not PyTorch's.
    pos, kw, bind_notes = bind(op, torch_args)
    notes += bind_notes
    try:
        result = op(*pos, **kw)
        torch_outs, torch_error = outputs_of(result), None
    except Exception as e:  # PyTorch's refusals come as RuntimeError, TypeError, IndexError...
        torch_outs, torch_error = None, "%s: %s" % (type(e).__name__, str(e).splitlines()[0]
                                                    if str(e) else "")
    tessera = case["tessera"]
    tessera_error = tessera.get("error")
    if tessera_error is not None and tessera_error["code"] == "NOT_FOUND":
        return NOT_IN_TESSERA, tessera_error["message"], notes, op
    if tessera_error is not None:
        mine = "%s: %s" % (tessera_error["code"], tessera_error["message"])
        if torch_error is not None:
            return AGREE, "both refuse (torch %s; Tessera %s)" % (torch_error, mine), notes, op
        return (TESSERA_ONLY_ERROR, "torch computes %s; Tessera refuses: %s" %
                (describe(torch_outs), mine), notes, op)
    if torch_error is not None:
        return (TORCH_ONLY_ERROR, "torch refuses (%s); Tessera computes %s" %
                (torch_error, describe_dumped(tessera["outputs"])), notes, op)
    diff = compare(case, tessera["outputs"], torch_outs)
    if diff is None:
        return AGREE, "", notes, op
    ref = case.get("reference")
    if ref is not None:
        # Which side the suite's fp64 reference takes tells a kernel bug (the reference agrees
        # with torch) from a wrong reading of PyTorch or a PyTorch kernel less precise than the
        # reference (it agrees with Tessera).
        with_torch = compare(case, ref, torch_outs) is None
        with_tessera = compare(case, tessera["outputs"], [make_tensor(r) for r in ref]) is None
        diff += "; the suite's reference agrees with %s" % (
            "both" if with_torch and with_tessera else "torch" if with_torch else
            "Tessera" if with_tessera else "neither")
    return DISAGREE, diff, notes, op


def schema_difference(ours, op):
    """None when Tessera's schema means what torch's does, else both schemas and what differs.

    Both are parsed by torch, so spelling (quotes, int[2] stride=1 vs [1, 1], float digits,
    int[] vs SymInt[]) does not count; names, types, keyword-only-ness, defaults and returns do.
    """
    if op is None:
        return None
    try:
        mine = torch._C.parse_schema("aten::" + ours)
    except RuntimeError as e:
        return "Tessera's schema does not parse (%s): %s" % (str(e).splitlines()[0], ours)

    def args(schema):
        return [(a.name, str(a.type), a.kwarg_only, repr(a.default_value)) for a in schema.arguments]

    def returns(schema):
        return [str(r.type) for r in schema.returns]

    differences = []
    theirs_args, mine_args = args(op._schema), args(mine)
    for k in range(max(len(theirs_args), len(mine_args))):
        a = theirs_args[k] if k < len(theirs_args) else None
        b = mine_args[k] if k < len(mine_args) else None
        if a != b:
            differences.append("argument %d: torch %s, Tessera %s" % (k, a, b))
    if returns(op._schema) != returns(mine):
        differences.append("returns: torch %s, Tessera %s" % (returns(op._schema), returns(mine)))
    if not differences:
        return None
    return "torch:   %s\n  Tessera: %s\n  %s" % (str(op._schema).replace(
        "aten::", "", 1), ours, "\n  ".join(differences))

# Note [Isolating PyTorch]
# PyTorch 1.13 crashes on some inputs that Tessera refuses with an error (native_batch_norm in
# evaluation mode without running statistics is a segmentation fault there), and one crash
# would end the audit with nothing printed. So the cases run in forked children: a child per
# op (at most CASES_PER_CHILD cases) hands its outcomes back through a
# pipe; when a child dies, each of its cases runs again in a child of its own, and the cases
# whose child dies are reported as torch_crash. The parent never runs an op, so no intra-op
# thread pool exists at a fork (torch.set_num_threads(1) in main keeps it so in the children).


def portable_outcome(case):
    """run_case's answer in a form that crosses a pipe: the overload called, by name."""
    try:
        outcome, detail, notes, _ = run_case(case)
    except Exception as e:  # noqa: BLE001  one odd case must not end the audit
        return TOOL_ERROR, "%s: %s" % (type(e).__name__, e), [], None, None
    return outcome, detail, notes, case.get("torch_op"), case.get("torch_args")


def in_child(work):
    """(work()'s result, None) computed in a forked child, or (None, how the child ended)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the parent's code
        os.close(read_fd)
        status = CHILD_TOOL_FAILURE
        try:
            with os.fdopen(write_fd, "wb") as out:
                out.write(pickle.dumps(work()))
            status = 0
        except BaseException:  # noqa: BLE001  this script's own failure, not PyTorch's
            traceback.print_exc()
        finally:
            os._exit(status)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as result:
        data = result.read()  # before waiting: a full pipe would block the child
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return pickle.loads(data), None
    if os.WIFSIGNALED(status):
        number_ = os.WTERMSIG(status)
        try:
            return None, "signal %d (%s)" % (number_, signal.Signals(number_).name)
        except ValueError:
            return None, "signal %d" % number_
    if os.WEXITSTATUS(status) == CHILD_TOOL_FAILURE:
        return None, TOOL_FAILED
    return None, "exit status %d" % os.WEXITSTATUS(status)


def crash_outcome(case, how):
    if how == TOOL_FAILED:
        return (TOOL_ERROR, "the child running the case failed in this script (its traceback is "
                "on stderr)", [], None, None)
    tessera = case["tessera"]
    if tessera.get("error") is not None:
        mine = "refuses: %s: %s" % (tessera["error"]["code"], tessera["error"]["message"])
    else:
        mine = "computes %s" % describe_dumped(tessera["outputs"])
    return TORCH_CRASH, "torch died (%s); Tessera %s" % (how, mine), [], None, None


def run_isolated(cases):
    """portable_outcome of every case, in order, each computed in a child process."""
    by_op = collections.OrderedDict()
    for i, case in enumerate(cases):
        by_op.setdefault(case["op"], []).append(i)
    outcomes = [None] * len(cases)
    for indices in by_op.values():
        for start in range(0, len(indices), CASES_PER_CHILD):
            chunk = indices[start:start + CASES_PER_CHILD]
            results, _ = in_child(lambda: [portable_outcome(cases[i]) for i in chunk])
            if results is None:  # a case killed the child: find it
                results = []
                for i in chunk:
                    one, how = in_child(lambda: portable_outcome(cases[i]))
                    results.append(one if one is not None else crash_outcome(cases[i], how))
            for i, result in zip(chunk, results):
                outcomes[i] = result
    return outcomes


def describe(outs):
    return ", ".join("%s%s" % (DTYPE_NAMES.get(t.dtype, t.dtype), list(t.shape)) for t in outs)


def describe_dumped(outs):
    return ", ".join("%s%s" % (t["dtype"], t["shape"]) for t in outs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", help="the JSON lines of tessera_dump_cases")
    parser.add_argument("--disagreements",
                        help="where to write the disagreements (default: CASES.disagreements.txt)")
    args = parser.parse_args()
    try:
        with open(args.cases) as f:
            lines = f.readlines()
    except OSError as e:
        sys.stderr.write("torch_side_by_side: cannot read %s: %s\n" % (args.cases, e))
        return 2
    out_path = args.disagreements or args.cases + ".disagreements.txt"
    torch.set_num_threads(1)  # Note [Isolating PyTorch]

    per_op = collections.OrderedDict()
    schema_notes = collections.OrderedDict()
    unreadable = 0
    cases = []
    for number_, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            cases.append(load(line))
        except ValueError as e:
            unreadable += 1
            sys.stderr.write("torch_side_by_side: line %d is not JSON: %s\n" % (number_, e))

    records = []
    for case, (outcome, detail, notes, torch_op, torch_args) in zip(cases, run_isolated(cases)):
        if torch_op is not None:  # the overload run_case called instead (bool Scalars)
            case["torch_op"], case["torch_args"] = torch_op, torch_args
        op = None if outcome in (NOT_IN_TORCH, TOOL_ERROR) else resolve(
            case.get("torch_op", case["op"]))
        counts = per_op.setdefault(case["op"], collections.Counter())
        counts[outcome] += 1
        if case["op"] not in schema_notes:
            schema_notes[case["op"]] = schema_difference(case.get("schema", ""),
                                                         resolve(case["op"]))
        if outcome != AGREE:
            records.append((case, outcome, detail, notes, op))

    if not per_op and unreadable:
        sys.stderr.write("torch_side_by_side: no readable case in %s\n" % args.cases)
        return 2

    columns = [AGREE, DISAGREE, TORCH_ONLY_ERROR, TESSERA_ONLY_ERROR, NOT_IN_TORCH]
    titles = ["agree", "disagree", "torch_err", "tessera_err", "no_torch"]
    total = collections.Counter()
    for c in per_op.values():
        total.update(c)
    for extra, title in ((NOT_IN_TESSERA, "no_tessera"), (TOOL_ERROR, "tool_error"),
                         (TORCH_CRASH, "torch_crash")):
        if total[extra]:
            columns.append(extra)
            titles.append(title)
    row = "%-28s %6s" + " %11s" * len(columns)
    header = row % tuple(["op", "cases"] + titles)
    print(header)
    print("-" * len(header))
    for name, c in list(per_op.items()) + [("total", total)]:
        if name == "total":
            print("-" * len(header))
        print(row % tuple([name, sum(c.values())] + [c[k] for k in columns]))
    if unreadable:
        print("%d unreadable lines skipped" % unreadable)

    with open(out_path, "w") as out:
        out.write("# torch %s vs Tessera: %d cases, %d not agreeing\n" %
                  (torch.__version__, sum(total.values()), len(records)))
        for case, outcome, detail, notes, op in records:
            out.write("\n%s %s %s [%s] %s\n" % (outcome.upper(), case["op"], case["dtype"],
                                                 case["kind"], case["sample"]))
            out.write("  %s\n" % detail)
            if case["kind"] == "error_input":
                out.write("  (an error input: Tessera must give %s)\n" % case.get("expected_code"))
            for n in notes:
                out.write("  note: %s\n" % n)
            if op is not None:
                try:
                    out.write("  repro: %s\n" % repro(case, op))
                except Exception as e:  # noqa: BLE001
                    out.write("  (no repro: %s)\n" % e)
        differing = [(k, v) for k, v in schema_notes.items() if v]
        if differing:
            out.write("\n# Schemas that differ from torch's (%d)\n" % len(differing))
            for name, text in differing:
                out.write("\nSCHEMA %s\n  %s\n" % (name, text))
    print("%d disagreements written to %s" % (len(records), out_path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
