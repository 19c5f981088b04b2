"""Schemas on both sides of the export: Tessera's ops.lock and PyTorch's ATen overloads."""

import os
import re

import torch

_HERE = os.path.dirname(os.path.abspath(__file__))
# Installed: share/tessera/python/tessera_export -> share/tessera/ops.lock.
# In the source tree: tools/exporter/tessera_export -> dispatcher/ops.lock.
_LOCK_CANDIDATES = [
    os.path.join(_HERE, "..", "..", "ops.lock"),
    os.path.join(_HERE, "..", "..", "..", "dispatcher", "ops.lock"),
]


class Lock(dict):
    """op name -> its current schema in ops.lock; .version: the newest op set it records."""
    version = "1.0"


def read_ops_lock(path=None):
    if path is None:
        path = os.environ.get("TESSERA_OPS_LOCK")
    if path is None:
        path = next((p for p in _LOCK_CANDIDATES if os.path.exists(p)), None)
    if path is None:
        raise FileNotFoundError("ops.lock not found: pass ops_lock= or set TESSERA_OPS_LOCK "
                                f"(looked in {', '.join(os.path.normpath(p) for p in _LOCK_CANDIDATES)})")
    lock = Lock()
    newest = (1, 0)
    with open(path) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            version, schema = line.rstrip("\n").split(" ", 1)
            major, minor = (int(p) for p in version.split("."))
            newest = max(newest, (major, minor))
            lock[schema[:schema.index("(")]] = schema  # a later line is the op's newer schema
    lock.version = f"{newest[0]}.{newest[1]}"
    return lock


def _split_top_level(text):
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def argument_names(schema):
    """The argument names of a schema text, in order ("add.Tensor(Tensor self, ...)")."""
    open_paren = schema.index("(")
    depth = 0
    for i in range(open_paren, len(schema)):
        depth += schema[i] == "("
        depth -= schema[i] == ")"
        if depth == 0:
            break
    names = []
    for part in _split_top_level(schema[open_paren + 1:i]):
        if part == "*":
            continue
        names.append(part.split("=", 1)[0].split()[-1])
    return names


def torch_schema_text(target):
    """PyTorch's schema of an overload in Tessera's vocabulary (no namespace, SymInt as int)."""
    text = str(target._schema)
    text = re.sub(r"^aten::", "", text)
    return re.sub(r"\bSymInt\b", "int", text)


class Default:
    """An argument the node left out: PyTorch's default value for it."""

    def __init__(self, value):
        self.value = value


def bind(target, args, kwargs):
    """name -> value for every argument of the overload, in schema order."""
    bound = {}
    positional = list(args)
    for i, a in enumerate(target._schema.arguments):
        if i < len(positional) and not a.kwarg_only:
            bound[a.name] = positional[i]
        elif a.name in kwargs:
            bound[a.name] = kwargs[a.name]
        elif a.has_default_value():
            bound[a.name] = Default(a.default_value)
        else:
            raise ValueError(f"{target}: argument '{a.name}' is missing")
    return bound


def op_name(target):
    base = target._schema.name.split("::", 1)[-1]
    overload = target._overloadname
    return base if overload == "default" else f"{base}.{overload}"


def normalize(target, args, kwargs):
    """(Tessera op name, overload, args, kwargs), rewriting PyTorch-internal ops to the public op they are.

    Each rewrite is exact: `_reshape_alias(x, size, stride)` is emitted only where `view(x,
    size)` gives that very stride (reshape's own rule), so it is written as `view`; split,
    unsafe_split and unbind are written as views by _Writer.split_into_views.
    """
    if target is torch.ops.aten._reshape_alias.default:
        return "view", torch.ops.aten.view.default, (args[0], args[1]), {}
    numbers = [a.name for i, a in enumerate(target._schema.arguments)
               if isinstance(a.type, torch.TensorType)
               and isinstance(args[i] if i < len(args) else kwargs.get(a.name), (int, float))]
    if numbers and "Tensor" in target._overloadname:
        # A Python number where the overload takes a Tensor (`x / 8.0` traces as div.Tensor with
        # a wrapped number, which type promotion treats as a scalar): the Scalar overload
        # (div.Tensor -> div.Scalar, div.Tensor_mode -> div.Scalar_mode) is the same
        # computation. Without one the number cannot be written (ExportError).
        packet = getattr(torch.ops.aten, target._schema.name.split("::", 1)[-1])
        name = target._overloadname.replace("Tensor", "Scalar")
        if name not in packet.overloads():
            raise ValueError(f"{op_name(target)}: a Python number for the Tensor argument "
                             f"'{numbers[0]}', and PyTorch has no {name} overload to take it")
        scalar = getattr(packet, name)
        return op_name(scalar), scalar, args, kwargs
    if target is torch.ops.aten.lift_fresh_copy.default:
        # A constant tensor the program made (`x[:, 0] = 0.0`) lifted as a fresh copy: a clone.
        return "clone", torch.ops.aten.clone.default, (args[0],), {}
    if target is torch.ops.aten._unsafe_view.default:
        # reshape's copy path: a view of the fresh copy it made (reshape gives the same values,
        # and the same view where one is possible).
        return "reshape", torch.ops.aten.reshape.default, args, kwargs
    return op_name(target), target, args, kwargs
