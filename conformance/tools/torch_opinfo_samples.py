#!/usr/bin/python3
"""Writes PyTorch's own OpInfo sample inputs as cases for tessera_dump_cases --replay.

Our database's samples are our reading of PyTorch (issue 9); PyTorch's OpInfo sample
functions (torch/testing/_internal/common_methods_invocations.py) exercise the edge cases its
authors thought of. This script runs each OpInfo's samples on the CPU under a dispatch mode
that records the ATen calls they reach (after PyTorch's composite decompositions, so conv2d
arrives as convolution and softmax as _softmax), keeps the calls to the functional overloads of
the ops Tessera's database names (--cases, a tessera_dump_cases output) and of the native ops
behind its composites, and writes each call as a case line in tessera_dump_cases's format,
without Tessera's side:

  build/bin/tessera_dump_cases --out /tmp/cases.jsonl
  /usr/bin/python3 conformance/tools/torch_opinfo_samples.py --cases /tmp/cases.jsonl \\
      --out /tmp/torch_samples.jsonl
  build/bin/tessera_dump_cases --replay /tmp/torch_samples.jsonl --out /tmp/torch_cases.jsonl
  /usr/bin/python3 conformance/tools/torch_side_by_side.py /tmp/torch_cases.jsonl

A development aid only (Debian's python3-torch, /usr/bin/python3): Tessera never depends on
PyTorch. PyTorch's testing module imports expecttest, which Debian does not package; a stub
stands in for it (nothing here uses it).
"""

import argparse
import json
import math
import sys
import types
import unittest
import warnings

if "expecttest" not in sys.modules:
    try:
        import expecttest  # noqa: F401
    except ImportError:
        stub = types.ModuleType("expecttest")
        stub.TestCase, stub.ACCEPT = unittest.TestCase, False
        sys.modules["expecttest"] = stub

import torch  # noqa: E402
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

DTYPES = {
    torch.bool: "bool",
    torch.uint8: "uint8",
    torch.int8: "int8",
    torch.int16: "int16",
    torch.int32: "int32",
    torch.int64: "int64",
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.float32: "float32",
    torch.float64: "float64",
}

# DESIGN.md: the native ops behind the composites that plugins implement.
NATIVE_OPS = {"_softmax", "_log_softmax", "convolution", "native_layer_norm",
              "native_batch_norm", "max_pool2d_with_indices", "_to_copy"}


class Skip(Exception):
    """A call this format cannot carry (complex tensors, a dtype argument it lacks...)."""


def number(v):
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else "inf" if v > 0 else "-inf"
    return v


def tensor_json(t, name):
    if t.dtype not in DTYPES:
        raise Skip("dtype %s" % t.dtype)
    t = t.detach().cpu().contiguous()
    values = t.reshape(-1).tolist()
    if t.dtype == torch.int64 and any(abs(v) > 2**53 for v in values):
        # Tessera's side reads values as doubles (HostTensor): past 2**53 it would see other
        # inputs than PyTorch (INT64_MAX arrives as 2**63, which wraps).
        raise Skip("int64 values beyond 2**53")
    if t.dtype == torch.bool:
        values = [int(v) for v in values]
    return {"name": name, "kind": "tensor", "dtype": DTYPES[t.dtype], "shape": list(t.shape),
            "values": [number(v) for v in values]}


def arg_json(value, schema_arg):
    name, type_ = schema_arg.name, str(schema_arg.type)
    if value is None:
        return {"name": name, "kind": "none"}
    if isinstance(value, torch.Tensor):
        return tensor_json(value, name)
    # A Tensor?[]: List[Optional[Tensor]] as PyTorch prints the type.
    optional_elements = "Optional[Tensor]" in type_ or "Tensor?" in type_
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(v, torch.Tensor) or (v is None and optional_elements) for v in value):
        # None elements of a Tensor?[] (index.Tensor's indices) are null.
        return {"name": name, "kind": "tensor_list",
                "tensors": [None if v is None else tensor_json(v, "") for v in value]}
    if isinstance(value, torch.dtype):
        if value not in DTYPES:
            raise Skip("dtype argument %s" % value)
        return {"name": name, "kind": "dtype", "value": DTYPES[value]}
    if isinstance(value, torch.device):
        return {"name": name, "kind": "device", "value": "cpu"}
    if isinstance(value, (torch.layout, torch.memory_format)):
        return {"name": name, "kind": "none"}  # strided / preserve: what None means
    if isinstance(value, str):
        return {"name": name, "kind": "string", "value": value}
    scalar = "number" in type_ or "Tensor" in type_  # a Scalar (or a wrapped number)
    if isinstance(value, bool):
        if scalar:
            return {"name": name, "kind": "scalar", "scalar_kind": "bool", "value": int(value)}
        return {"name": name, "kind": "bool", "value": value}
    if isinstance(value, int):
        if scalar:
            return {"name": name, "kind": "scalar", "scalar_kind": "int", "value": value}
        if "List" in type_:
            return {"name": name, "kind": "int_list", "value": [value]}
        return {"name": name, "kind": "int", "value": value}
    if isinstance(value, float):
        if scalar:
            return {"name": name, "kind": "scalar", "scalar_kind": "double",
                    "value": number(value)}
        return {"name": name, "kind": "double", "value": number(value)}
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
        return {"name": name, "kind": "int_list", "value": list(value)}
    raise Skip("argument %s of type %s" % (name, type(value).__name__))


def case_of(func, args, kwargs):
    """(op name, args JSON) for one recorded call, in schema order."""
    schema_args = list(func._schema.arguments)
    name = func.name().replace("aten::", "", 1)
    missing = object()
    values = []
    for i, a in enumerate(schema_args):
        values.append(args[i] if i < len(args) else kwargs.get(a.name, missing))
    while values and values[-1] is missing:
        values.pop()
    out = []
    for a, v in zip(schema_args, values):
        if v is missing:
            v = a.default_value
        if "Tensor" in str(a.type) and isinstance(v, (bool, int, float)):
            # A wrapped number (torch.add(t, 2) reaches add.Tensor with the Python 2): its
            # Scalar overload takes it with the same promotion.
            base, _, overload = name.partition(".")
            scalar_name = base + "." + overload.replace("Tensor", "Scalar")
            if "Tensor" not in overload or not hasattr(getattr(torch.ops.aten, base),
                                                        overload.replace("Tensor", "Scalar")):
                raise Skip("a wrapped number for %s" % a.name)
            name = scalar_name
        out.append(arg_json(v, a))
    return name, out


def keep(name, bases):
    """A functional overload of an op the database has (or of a native op behind one): other
    overloads of the database's ops are kept too, so that the replay shows those Tessera lacks
    (as not_in_tessera) or has without samples of its own."""
    base, _, overload = name.partition(".")
    return base in bases and not base.endswith("_") and not overload.endswith("out")


class Recorder(TorchDispatchMode):
    def __init__(self, bases):
        super().__init__()
        self.bases, self.calls = bases, []

    def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func.name().replace("aten::", "", 1)
        if keep(name, self.bases):
            try:
                self.calls.append(case_of(func, args, kwargs))
            except Skip:
                pass
        return func(*args, **kwargs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", required=True,
                        help="a tessera_dump_cases output: the ops to keep are its ops")
    parser.add_argument("--out", required=True)
    parser.add_argument("--per-op-dtype", type=int, default=40,
                        help="at most this many calls per op and dtype (default 40)")
    args = parser.parse_args()
    try:
        with open(args.cases) as f:
            wanted = {json.loads(line)["op"] for line in f if line.strip()}
    except (OSError, ValueError) as e:
        sys.stderr.write("torch_opinfo_samples: cannot read %s: %s\n" % (args.cases, e))
        return 2
    bases = {w.partition(".")[0] for w in wanted} | NATIVE_OPS

    # Deprecation and beta notices of the ops PyTorch's samples run are not ours to act on.
    warnings.filterwarnings("ignore")
    seen, counts, written = set(), {}, 0

    def record(info, sample, dtype_name, kind):
        """Runs one sample under the recorder and writes the calls it reaches."""
        nonlocal written
        recorder = Recorder(bases)
        try:
            with recorder:
                info.op(sample.input, *sample.args, **sample.kwargs)
        except Exception:  # noqa: BLE001  PyTorch refusing: the replay shows it refusing too
            pass
        for name, call_args in recorder.calls:
            key = json.dumps([name, call_args], sort_keys=True)
            if key in seen:
                continue
            seen.add(key)
            n = counts.get((name, dtype_name, kind), 0)
            if n >= args.per_op_dtype:
                continue
            counts[(name, dtype_name, kind)] = n + 1
            out.write(json.dumps({
                "op": name, "dtype": dtype_name, "kind": kind,
                "sample": "OpInfo %s: %s" % (info.name, describe(call_args)),
                "compare_returns": -1, "args": call_args}) + "\n")
            written += 1

    torch.manual_seed(0)
    with open(args.out, "w") as out:
        for info in op_db:
            try:
                dtypes = [d for d in info.supported_dtypes("cpu") if d in DTYPES]
            except Exception:  # noqa: BLE001  an OpInfo without CPU dtypes
                continue
            for dtype in dtypes:
                try:
                    samples = list(info.sample_inputs("cpu", dtype, requires_grad=False))
                except Exception:  # noqa: BLE001  a sample function that needs more
                    continue
                for sample in samples:
                    record(info, sample, DTYPES[dtype], "torch_sample")
            # PyTorch's error inputs: the calls that reach ATen must fail on Tessera too.
            try:
                errors = list(info.error_inputs("cpu"))
            except Exception:  # noqa: BLE001  an OpInfo without error inputs
                errors = []
            for error in errors:
                record(info, error.sample_input, "*", "torch_error_input")
    sys.stderr.write("torch_opinfo_samples: %d calls to %d ops written to %s\n" %
                     (written, len({k[0] for k in counts}), args.out))
    return 0


def describe(call_args):
    parts = []
    for a in call_args:
        if a["kind"] == "tensor":
            parts.append("%s%s" % (a["dtype"], a["shape"]))
        elif a["kind"] == "tensor_list":
            parts.append("[%s]" % ", ".join(
                "None" if t is None else "%s%s" % (t["dtype"], t["shape"]) for t in a["tensors"]))
        elif a["kind"] != "none":
            parts.append("%s=%s" % (a["name"], a.get("value")))
    return ", ".join(parts)


if __name__ == "__main__":
    sys.exit(main())
