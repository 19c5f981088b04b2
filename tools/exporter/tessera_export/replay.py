"""A model file's graph run by PyTorch: each node as the ATen op it names.

The exporter uses it where it must know what a written graph computes, not what a trace
recorded: a graph fitted to dynamic dims at sizes >= 2 is run at a size below 2, where PyTorch's
own trace takes other decompositions (dims.py), and compared with the program's eager outputs.
It reads the graph as the runtime does: size expressions evaluated at the run's dims, a `device`
argument as the inputs' device, every argument passed by its name in the op's schema.
"""

import torch

from . import schemas
from .encoding import DTYPES, MEMORY_FORMATS

# The format's names back to PyTorch's.
_DTYPES = {name: dtype for dtype, (_, name) in DTYPES.items()}
_MEMORY_FORMATS = {name: fmt for fmt, name in MEMORY_FORMATS.items()}


def evaluate(value, sizes):
    """An integer of the graph: a plain integer, or {"expr": terms} at `sizes` (name -> size)."""
    if not isinstance(value, dict):
        return value
    total = 0
    for coefficient, *dims in value["expr"]:
        term = coefficient
        for d in dims:
            term *= sizes[d]
        total += term
    return total


def _float(x):
    return float(x) if isinstance(x, str) else x  # "inf", "-inf", "nan"


def _op(name):
    base, _, overload = name.partition(".")
    return getattr(getattr(torch.ops.aten, base), overload or "default")


def run(graph, constants, inputs, sizes):
    """The graph's outputs for `inputs` (in the graph's input order) with the dims at `sizes`.

    constants: value name -> tensor (as the exporter holds them: "c.<target>").
    """
    values = {k: v.clone() for k, v in constants.items()}  # a node may write one in place
    device = inputs[0].device if inputs else torch.device("cpu")
    if len(inputs) != len(graph["inputs"]):
        raise ValueError(f"expected {len(graph['inputs'])} inputs, got {len(inputs)}")
    for spec, x in zip(graph["inputs"], inputs):
        want = [evaluate(v, sizes) for v in spec["sizes"]]
        if list(x.shape) != want:  # as the runtime's BindDims refuses it
            raise ValueError(f"input '{spec['name']}': expected sizes {want} at {sizes}, got "
                             f"{list(x.shape)}")
        values[spec["name"]] = x

    def decode(arg):
        (kind, x), = arg.items()
        if kind == "none":
            return None
        if kind == "tensor":
            return values[x]
        if kind == "tensors":
            return [None if v is None else values[v] for v in x]
        if kind == "int":
            return evaluate(x, sizes)
        if kind == "ints":
            return [evaluate(v, sizes) for v in x]
        if kind == "float":
            return _float(x)
        if kind == "floats":
            return [_float(v) for v in x]
        if kind == "dtype":
            return _DTYPES[x]
        if kind == "device":
            return device
        if kind == "memory_format":
            return _MEMORY_FORMATS[x]
        if kind == "layout":
            return torch.strided
        return x  # bool, bools, str

    for node in graph["nodes"]:
        op = _op(node["op"])
        names = schemas.argument_names(node["schema"])
        if len(names) != len(node["args"]):
            raise ValueError(f"{node['op']}: {len(node['args'])} arguments for the schema's "
                             f"{len(names)}")
        given = dict(zip(names, (decode(a) for a in node["args"])))
        args, kwargs = [], {}
        skipped = False
        for a in op._schema.arguments:
            if a.name not in given:
                skipped = True  # an argument Tessera's schema lacks: PyTorch's default
                continue
            if a.kwarg_only or skipped:  # after a gap, by name
                kwargs[a.name] = given.pop(a.name)
            else:
                args.append(given.pop(a.name))
        if given:  # an argument PyTorch's schema lacks would be lost: not the runtime's call
            raise ValueError(f"{node['op']}: PyTorch's schema has no argument "
                             f"{', '.join(given)}")
        with torch.no_grad():
            out = op(*args, **kwargs)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        if len(outs) != len(node["outputs"]):
            raise ValueError(f"{node['op']} returned {len(outs)} values, the node names "
                             f"{len(node['outputs'])}")
        for name, t in zip(node["outputs"], outs):
            values[name] = t
    return [values[v] for v in graph["outputs"]]
