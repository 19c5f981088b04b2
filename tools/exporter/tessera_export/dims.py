"""Dynamic dims: one graph for several sizes of a dim, found by tracing at several sizes.

PyTorch 1.13's make_fx records every size as a constant, and its symbolic mode fails on a
module's own parameters. So the exporter traces the program concretely at several sizes of
each marked dim and fits every integer that differs between the traces (an input's size, an
`int` or `ints` argument: view sizes, slice ends, strides) as a polynomial in the dims:

- the graphs must agree node for node: the same ops, the same values, every float, string and
  constant tensor the same; only integers may follow the sizes (a program whose graph depends on
  a size, or that computes a float from one, is refused, naming the node);
- degree at most 2 in each dim (strides carry products: a [b, 12, t, t] tensor's stride is
  12*t*t), with integer coefficients: traced on a 3^k grid of sizes, fitted exactly (rationals),
  then checked beyond the grid (each dim alone, then all), at the example's sizes, and at every
  combination of sizes below 2 the range allows; PyTorch specializes sizes 0 and 1 (at batch 1
  a reshape is a view where at 2 it copies), so where a trace there differs, the fitted graph
  is run by PyTorch (replay.py) and must give the program's outputs, or the export is refused;
- each dim must be, exactly, the size of some input axis: a run reads the dims off its inputs.

The file then holds `"dims"` and `{"expr": [[coefficient, dim, ...], ...]}` in place of those
integers (docs/model_format.md, "Dynamic dims").
"""

import copy
import itertools
from fractions import Fraction

import torch

# The smallest size the fit traces at: PyTorch specializes 0 and 1 (a broadcast, a squeeze).
_SMALLEST_FIT_SIZE = 2
# At most 3 dims: the fit traces a 3^k grid, and a polynomial of degree <= 2 in each of 3 dims
# has at most 27 terms of at most 6 factors, within the reader's bounds (64 terms, 8 factors a
# term: runtime/model/dims.h).
_MAX_DIMS = 3


class DimsError(Exception):
    """Raised with a message naming the dim, the node or the argument; export wraps it."""


def _check_dims(dims):
    ranges = {}
    if not isinstance(dims, dict) or not dims:
        raise DimsError("dynamic_dims: expected a dict of dim name -> (min, max), e.g. "
                        "{'batch': (1, 64)}")
    for name, bounds in dims.items():
        if not isinstance(name, str) or not name:
            raise DimsError(f"dynamic_dims: expected a non-empty name, got {name!r}")
        def integer(v):
            return isinstance(v, int) and not isinstance(v, bool)
        if (not isinstance(bounds, (tuple, list)) or len(bounds) != 2 or
                not integer(bounds[0]) or not (bounds[1] is None or integer(bounds[1]))):
            raise DimsError(f"dynamic_dims['{name}']: expected (min, max) integers (max may be "
                            f"None: no bound), got {bounds!r}")
        lo, hi = bounds
        base = max(lo, _SMALLEST_FIT_SIZE)
        if lo < 0 or (hi is not None and hi < base + 3):
            raise DimsError(f"dynamic_dims['{name}']: the range [{lo}, {hi}] must start at 0 or "
                            f"more and hold {base}..{base + 3} (three sizes to fit and one to "
                            "check); for fewer sizes, export one file per size")
        ranges[name] = (lo, hi)
    if len(ranges) > _MAX_DIMS:
        raise DimsError(f"dynamic_dims: at most {_MAX_DIMS} dims, got {len(ranges)} (each more "
                        "triples the traces)")
    return ranges


def _int_slots(graph):
    """Where a trace's integers are: (path, value) for each input size and each integer of an
    `int` or `ints` argument, in a fixed order; and the graph with those integers blanked."""
    slots = []
    skeleton = copy.deepcopy(graph)
    for i, inp in enumerate(skeleton["inputs"]):
        for a, size in enumerate(inp["sizes"]):
            slots.append((("input", i, a), size))
            inp["sizes"][a] = None
    for n, node in enumerate(skeleton["nodes"]):
        for j, arg in enumerate(node["args"]):
            if "int" in arg:
                slots.append((("node", n, j, None), arg["int"]))
                arg["int"] = None
            elif "ints" in arg:
                for e, value in enumerate(arg["ints"]):
                    slots.append((("node", n, j, e), value))
                    arg["ints"][e] = None
    return skeleton, slots


def _first_difference(first, other, arg_names):
    """Where blanked graph `other` first differs from `first`, for an error message."""
    if first["inputs"] != other["inputs"]:
        return "the inputs' dtypes or ranks differ"
    if len(first["nodes"]) != len(other["nodes"]):
        return f"it has {len(other['nodes'])} nodes, where the first has {len(first['nodes'])}"
    for n, (x, y) in enumerate(zip(first["nodes"], other["nodes"])):
        if x["op"] != y["op"]:
            return f"node {n} is {y['op']}, where the first has {x['op']}"
        names = arg_names(x)
        for j, (p, q) in enumerate(zip(x["args"], y["args"])):
            if p != q:
                name = names[j] if j < len(names) else str(j)
                return f"node {n} ({x['op']}) argument '{name}' is {q}, where the first has {p}"
        if x != y:
            return f"node {n} ({x['op']}) has other outputs"
    return "its outputs differ"


def _where(path, graph, arg_names):
    if path[0] == "input":
        _, i, a = path
        return f"input {i} ('{graph['inputs'][i]['name']}') axis {a}"
    _, n, j, e = path
    node = graph["nodes"][n]
    names = arg_names(node)
    name = names[j] if j < len(names) else str(j)
    return f"node {n} ({node['op']}) argument '{name}'" + ("" if e is None else f"[{e}]")


def _solve3(points, values):
    """Monomial coefficients c0, c1, c2 of the parabola through three points."""
    (p0, p1, p2), (f0, f1, f2) = points, values
    d1 = (f1 - f0) / (p1 - p0)
    d2 = ((f2 - f1) / (p2 - p1) - d1) / (p2 - p0)
    return [f0 - d1 * p0 + d2 * p0 * p1, d1 - d2 * (p0 + p1), d2]


def _fit(grid_points, values):
    """The coefficients (exponents tuple -> Fraction) of the polynomial of degree <= 2 in each
    dim through `values` (index tuple on the 3^k grid -> int)."""
    k = len(grid_points)
    coeffs = {idx: Fraction(v) for idx, v in values.items()}
    for axis in range(k):
        for rest in itertools.product(range(3), repeat=k - 1):
            idxs = [rest[:axis] + (m,) + rest[axis:] for m in range(3)]
            solved = _solve3(grid_points[axis], [coeffs[i] for i in idxs])
            for i, c in zip(idxs, solved):
                coeffs[i] = c
    return {e: c for e, c in coeffs.items() if c != 0}


def _evaluate(coeffs, sizes):
    total = 0
    for exps, c in coeffs.items():
        term = c
        for s, e in zip(sizes, exps):
            term *= s ** e
        total += term
    return total


def _expr(coeffs, names):
    """The format's encoding: a plain integer for a constant, else {"expr": terms}."""
    if all(not any(e) for e in coeffs):
        return int(coeffs.get((0,) * len(names), 0))
    terms = []
    for exps in sorted(coeffs, key=lambda e: (-sum(e), [-x for x in e])):
        terms.append([int(coeffs[exps])] +
                     [name for name, e in zip(names, exps) for _ in range(e)])
    return {"expr": terms}


def fit_graph(trace, dims, arg_names, agrees):
    """The graph, its integers fitted as polynomials in `dims`, and a check of another trace.

    trace(sizes) -> (graph, constants) traces the program with each dim at sizes[name] (a dict
    name -> size). arg_names(node) -> the node's argument names, for errors. agrees(graph,
    constants, sizes) raises DimsError unless the fitted graph, run by PyTorch at `sizes`, gives
    the program's own outputs there (for sizes below 2 whose trace differs). Returns the graph
    (with "dims"), the input axis each dim is read from ({name: (input, axis)}), and
    check(sizes, graph, constants), which raises DimsError unless a trace at `sizes` is the
    fitted graph there or, below the fitted sizes, the fitted graph computes the program there
    (the exporter checks the example with it).
    """
    ranges = _check_dims(dims)
    names = list(ranges)
    grid_points = [[max(ranges[n][0], _SMALLEST_FIT_SIZE) + m for m in range(3)] for n in names]

    first_sizes = {n: grid_points[a][0] for a, n in enumerate(names)}
    traces = {}
    for idx in itertools.product(range(3), repeat=len(names)):
        sizes = {n: grid_points[a][idx[a]] for a, n in enumerate(names)}
        traces[idx] = (sizes, trace(sizes))
    reference_graph, reference_constants = traces[(0,) * len(names)][1]
    skeleton, slots = _int_slots(reference_graph)

    def same_shape(graph, constants, sizes):
        other_skeleton, other_slots = _int_slots(graph)
        if other_skeleton != skeleton:
            raise DimsError(f"at sizes {sizes} the program traces another graph than at "
                            f"{first_sizes} (the first): "
                            f"{_first_difference(skeleton, other_skeleton, arg_names)}. Only "
                            "integers (sizes, view shapes, slice bounds) may depend on a "
                            "dynamic dim")
        for cname, tensor in reference_constants.items():
            other = constants.get(cname)
            if other is None or not _same_tensor(other, tensor):
                raise DimsError(f"constant {cname} differs between sizes {sizes} and "
                                f"{first_sizes} (the first): a tensor the program makes from a "
                                "size cannot be a constant of the graph")
        return [v for _, v in other_slots]

    grid_values = {idx: same_shape(g, c, sizes) for idx, (sizes, (g, c)) in traces.items()}
    fitted = []
    for s, (path, _) in enumerate(slots):
        coeffs = _fit(grid_points, {idx: vals[s] for idx, vals in grid_values.items()})
        if any(c.denominator != 1 for c in coeffs.values()):
            raise DimsError(f"{_where(path, reference_graph, arg_names)}: its values at the "
                            "traced sizes fit no polynomial with integer coefficients (a "
                            "division by a size?)")
        fitted.append(coeffs)

    graph = copy.deepcopy(reference_graph)
    for (path, _), coeffs in zip(slots, fitted):
        value = _expr(coeffs, names)
        if path[0] == "input":
            graph["inputs"][path[1]]["sizes"][path[2]] = value
        else:
            _, n, j, e = path
            arg = graph["nodes"][n]["args"][j]
            if e is None:
                arg["int"] = value
            else:
                arg["ints"][e] = value
    graph["dims"] = [dict({"name": n, "min": ranges[n][0]},
                          **({} if ranges[n][1] is None else {"max": ranges[n][1]}))
                     for n in names]
    sources = {}
    for n in names:
        axis = {"expr": [[1, n]]}
        sources[n] = next(((i, inp["sizes"].index(axis)) for i, inp in enumerate(graph["inputs"])
                           if axis in inp["sizes"]), None)
        if sources[n] is None:
            raise DimsError(f"dim '{n}' is not, exactly, the size of any input axis (a run "
                            "reads each dim off its inputs): mark a dim the inputs carry")

    def equal_trace(sizes, traced, constants):
        values = same_shape(traced, constants, sizes)
        at = [sizes[n] for n in names]
        for (path, _), coeffs, got in zip(slots, fitted, values):
            want = _evaluate(coeffs, at)
            if want != got:
                raise DimsError(f"{_where(path, reference_graph, arg_names)} is {got} at sizes "
                                f"{sizes}, where the polynomial fitted to the traces at "
                                f"{dict(zip(names, grid_points))} gives {want}: it is not a "
                                "polynomial of degree <= 2 in the dims (a size computed by "
                                "division or rounding, as a convolution's output size)")

    def check(sizes, traced, constants):
        try:
            equal_trace(sizes, traced, constants)
        except DimsError as differs:
            below = [n for a, n in enumerate(names) if sizes[n] < grid_points[a][0]]
            if not below:
                raise
            # Below the fitted sizes PyTorch may decompose otherwise (at batch 1, reshape is a
            # view where at 2 it copies; a size-1 dim's stride is free): there the fitted graph
            # must give the program's own outputs, run by PyTorch; an equal trace is not needed.
            try:
                agrees(graph, reference_constants, sizes)
            except DimsError as wrong:
                starts = ", ".join(f"'{n}' at {first_sizes[n]}" for n in below)
                raise DimsError(
                    f"{differs}; and the graph fitted at sizes from {first_sizes} does not "
                    f"compute the program at {sizes}: {wrong}. Export with dynamic_dims "
                    f"starting {starts}, and a file of its own for the smaller sizes") from None

    # Checked beyond the grid: each dim a size further alone, then all together.
    for a, n in enumerate(names):
        sizes = dict(first_sizes, **{n: grid_points[a][2] + 1})
        check(sizes, *trace(sizes))
    beyond = {n: grid_points[a][2] + 1 for a, n in enumerate(names)}
    if len(names) > 1:
        check(beyond, *trace(beyond))
    # And below it, where the range allows: every combination of each dim's sizes below 2 and
    # its first fitted size, corners included (batch 1 with sequence 1).
    choices = [list(range(ranges[n][0], grid_points[a][0])) + [grid_points[a][0]]
               for a, n in enumerate(names)]
    for combination in itertools.product(*choices):
        sizes = dict(zip(names, combination))
        if sizes != first_sizes:
            check(sizes, *trace(sizes))
    return graph, sources, check


def _same_tensor(a, b):
    """Equal dtype, shape and values, NaN equal to NaN (a constant holding a NaN is no change)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.is_floating_point() or a.is_complex():
        return bool(torch.isclose(a, b, rtol=0, atol=0, equal_nan=True).all())
    return torch.equal(a, b)
