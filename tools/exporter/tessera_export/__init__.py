"""tessera_export: a PyTorch program, traced once to ATen ops, written as one Tessera model file.

    import tessera_export
    tessera_export.export(model.eval(), (x,), "resnet18.tsrm")

The file (docs/model_format.md) is a safetensors file: its tensors are the program's constants
(``constant/...``), the example inputs (``input/...``) and PyTorch's outputs for them
(``expected/...``); its ``__metadata__`` holds the format's name and version and the graph as
JSON. Every node names its op by its ``ops.lock`` schema. A node whose op Tessera does not define
is still written (with PyTorch's schema), so that ``tessera-run`` can name what is missing.

The tracer is ``make_fx`` (PyTorch 1.13 and later), which records the program below autograd
as ATen ops with exact overloads. It traces with autograd on: PyTorch takes its fused inference
kernels (``_transformer_encoder_layer_fwd``, ``_native_multi_head_attention``) only under
``no_grad``, so with autograd on an encoder layer comes out as the ATen ops it is made of, and a
training step that calls ``torch.autograd.grad`` itself traces whole.
"""

import json
import math
import operator
import os
import struct

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from . import dims as dynamic
from . import replay
from . import schemas
from .encoding import DTYPES as _DTYPES, MEMORY_FORMATS as _MEMORY_FORMATS

__all__ = ["export", "ExportError", "FORMAT", "FORMAT_VERSION"]

FORMAT = "tessera.model"
# The newest format version the exporter writes: 2 added dynamic dims. A file without dynamic
# dims is written as version 1, which every runtime since the first release reads.
FORMAT_VERSION = 2

class ExportError(Exception):
    """The program cannot be written as a Tessera model; the message names the node."""


def _dtype_name(dtype):
    if dtype not in _DTYPES:
        raise ExportError(f"dtype {dtype} has no Tessera equivalent (expected one of "
                          f"{', '.join(v[1] for v in _DTYPES.values())})")
    return _DTYPES[dtype][1]


def _flatten(value, what):
    """The tensors of a tensor, or of a (nested) list/tuple/dict of them, in order."""
    if isinstance(value, (torch.Tensor, torch.fx.Node)):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _flatten(v, what)]
    if isinstance(value, dict):
        return [t for k in value for t in _flatten(value[k], what)]
    raise ExportError(f"{what}: expected tensors (or lists, tuples, dicts of them), "
                      f"got {type(value).__name__}")


def _number(x):
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


class _Writer:
    """Turns a make_fx graph into the format's graph JSON."""

    def __init__(self, gm, input_names, lock, list_lengths):
        self.gm = gm
        self.list_lengths = list_lengths  # fx.Node -> length of the Tensor[] it returned
        self.lock = lock
        self.names = {}  # fx.Node -> value name (or list of names for a multi-return node)
        self.constants = {}  # value name -> tensor
        self.nodes = []
        self.input_names = input_names

    def value(self, arg, where):
        if arg not in self.names:
            raise ExportError(f"{where}: uses {arg.name}, which no earlier node defines")
        name = self.names[arg]
        if isinstance(name, list):
            raise ExportError(f"{where}: uses all returns of {arg.name} as one tensor")
        return name

    def encode(self, arg, where):
        """One argument as the format's tagged JSON (docs/model_format.md, "Arguments")."""
        if arg is None:
            return {"none": None}
        if isinstance(arg, torch.fx.Node):
            return {"tensor": self.value(arg, where)}
        if isinstance(arg, bool):
            return {"bool": arg}
        if isinstance(arg, int):
            return {"int": arg}
        if isinstance(arg, float):
            return {"float": _number(arg)}
        if isinstance(arg, str):
            return {"str": arg}
        if isinstance(arg, torch.dtype):
            return {"dtype": _dtype_name(arg)}
        if isinstance(arg, torch.device):
            return {"device": str(arg)}
        if isinstance(arg, torch.memory_format):
            return {"memory_format": _MEMORY_FORMATS[arg]}
        if isinstance(arg, torch.layout):
            if arg != torch.strided:
                raise ExportError(f"{where}: layout {arg}: Tessera tensors are strided")
            return {"layout": "strided"}
        if isinstance(arg, (list, tuple)):
            if all(isinstance(a, bool) for a in arg) and arg:
                return {"bools": list(arg)}
            if all(isinstance(a, int) and not isinstance(a, bool) for a in arg):
                return {"ints": list(arg)}
            if all(isinstance(a, (int, float)) and not isinstance(a, bool) for a in arg):
                return {"floats": [_number(float(a)) for a in arg]}
            if all(a is None or isinstance(a, torch.fx.Node) for a in arg):
                return {"tensors": [None if a is None else self.value(a, where) for a in arg]}
        raise ExportError(f"{where}: an argument of type {type(arg).__name__} ({arg!r}) has no "
                          "encoding in the model format")

    def call(self, node, index):
        target = node.target
        if target is operator.getitem:
            source, item = node.args
            outs = self.names.get(source)
            if not isinstance(outs, list) or not 0 <= item < len(outs):
                raise ExportError(f"node {node.name}: getitem {item} of {source.name}, which "
                                  "does not have that many returns")
            self.names[node] = outs[item]
            return
        if not isinstance(target, torch._ops.OpOverload):
            raise ExportError(f"node {node.name}: calls {target}, not an ATen op "
                              "(make_fx should have traced it to ATen ops)")
        if self.split_into_views(node, index) or self.rsub_as_add(node, index):
            return
        try:
            op, target, args, kwargs = schemas.normalize(target, node.args, node.kwargs)
        except ValueError as e:
            raise ExportError(f"node {node.name}: {e}") from None
        where = f"node {node.name} ({op})"
        schema = self.lock.get(op)
        torch_schema = schemas.torch_schema_text(target)
        if schema is None:
            # Not in Tessera's op set: written with PyTorch's schema so the runtime can name it.
            arg_names = [a.name for a in target._schema.arguments]
            schema = torch_schema
        else:
            arg_names = schemas.argument_names(schema)
        bound = schemas.bind(target, args, kwargs)
        encoded = []
        for name in arg_names:
            if name not in bound:
                raise ExportError(f"{where}: Tessera's schema `{schema}` has argument '{name}', "
                                  f"which PyTorch's `{torch_schema}` lacks")
            value = bound.pop(name)
            encoded.append(self.encode(value.value if isinstance(value, schemas.Default)
                                       else value, where))
        for name, value in bound.items():
            if not isinstance(value, schemas.Default):
                raise ExportError(f"{where}: PyTorch passes '{name}' = {value!r}, which "
                                  f"Tessera's schema `{schema}` lacks")
        returns = len(target._schema.returns)
        if returns == 1 and isinstance(target._schema.returns[0].type, torch.ListType):
            # A Tensor[] return (split, unbind): one value per element, as many as the trace made.
            out_list = [f"v{index}.{k}" for k in range(self.list_lengths[node])]
            self.names[node] = out_list
        elif returns == 1:
            outs = f"v{index}"
            self.names[node] = outs
            out_list = [outs]
        else:
            out_list = [f"v{index}.{k}" for k in range(returns)]
            self.names[node] = out_list
        self.nodes.append({"op": op, "schema": schema, "args": encoded, "outputs": out_list})

    def view_node(self, op, args, output):
        self.nodes.append({"op": op, "schema": self.lock[op], "args": args, "outputs": [output]})

    def rsub_as_add(self, node, index):
        """rsub.Scalar(self, other, alpha) = other - alpha * self, written as
        add.Scalar(mul.Scalar(self, -alpha), other): negation is exact, so the two round alike."""
        if node.target is not torch.ops.aten.rsub.Scalar:
            return False
        bound = schemas.bind(node.target, node.args, node.kwargs)
        value = lambda name: (bound[name].value if isinstance(bound[name], schemas.Default)
                              else bound[name])
        where = f"node {node.name} (rsub.Scalar)"
        scaled, out = f"v{index}.scaled", f"v{index}"
        self.nodes.append({"op": "mul.Scalar", "schema": self.lock["mul.Scalar"],
                           "args": [self.encode(value("self"), where),
                                    self.encode(-value("alpha"), where)],
                           "outputs": [scaled]})
        self.nodes.append({"op": "add.Scalar", "schema": self.lock["add.Scalar"],
                           "args": [{"tensor": scaled}, self.encode(value("other"), where),
                                    {"int": 1}],
                           "outputs": [out]})
        self.names[node] = out
        return True

    def split_into_views(self, node, index):
        """split / split_with_sizes / unbind written as one slice or select per piece.

        Each piece is the very view the op returns (the same sizes, strides and storage), so
        the rewrite is exact; it keeps list-returning ops out of the graph.
        """
        aten = torch.ops.aten
        target = node.target
        splits = (aten.split.Tensor, aten.unsafe_split.Tensor)
        sized = (aten.split_with_sizes.default, aten.unsafe_split_with_sizes.default)
        if target not in splits + sized + (aten.unbind.int,):
            return False
        bound = schemas.bind(target, node.args, node.kwargs)
        value = lambda name: (bound[name].value if isinstance(bound[name], schemas.Default)
                              else bound[name])
        where = f"node {node.name} ({schemas.op_name(target)})"
        self_arg = self.encode(value("self"), where)
        dim = value("dim")
        pieces = self.list_lengths[node]
        outs = [f"v{index}.{k}" for k in range(pieces)]
        self.names[node] = outs
        if target is aten.unbind.int:
            for k, out in enumerate(outs):
                self.view_node("select.int", [self_arg, {"int": dim}, {"int": k}], out)
            return True
        if target in splits:
            size = value("split_size")
            bounds = [(k * size, (k + 1) * size) for k in range(pieces)]
        else:
            ends = [sum(value("split_sizes")[:k + 1]) for k in range(pieces)]
            bounds = [(end - size, end) for end, size in zip(ends, value("split_sizes"))]
        for (start, end), out in zip(bounds, outs):
            # slice clamps `end` to the dim's size, as the last piece of split is shorter
            self.view_node("slice.Tensor", [self_arg, {"int": dim}, {"int": start},
                                            {"int": end}, {"int": 1}], out)
        return True

    def run(self):
        placeholders = 0
        outputs = None
        for index, node in enumerate(self.gm.graph.nodes):
            if node.op == "placeholder":
                self.names[node] = self.input_names[placeholders]
                placeholders += 1
            elif node.op == "get_attr":
                tensor = getattr(self.gm, node.target)
                if not isinstance(tensor, torch.Tensor):
                    raise ExportError(f"constant {node.target}: expected a tensor, got "
                                      f"{type(tensor).__name__}")
                name = f"c.{node.target}"
                self.names[node] = name
                self.constants[name] = tensor.detach()
            elif node.op == "call_function":
                self.call(node, index)
            elif node.op == "output":
                outputs = [self.value(o, "output") for o in _flatten(node.args[0], "output")]
            else:
                raise ExportError(f"node {node.name}: {node.op} is not expected in a make_fx "
                                  "graph")
        return outputs


def _remove_dead_nodes(graph):
    """Removes functional nodes nothing reads; an op that writes an argument always stays."""
    changed = True
    while changed:
        changed = False
        for node in reversed(list(graph.nodes)):
            if node.op not in ("call_function", "get_attr") or node.users:
                continue
            target = node.target
            if isinstance(target, torch._ops.OpOverload) and target._schema.is_mutable:
                continue
            graph.erase_node(node)
            changed = True


def _list_lengths(gm, example_inputs):
    """The length of each list a node returns in a run on the example inputs."""
    lengths = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            result = super().run_node(n)
            if isinstance(result, (list, tuple)):
                lengths[n] = len(result)
            return result

    with torch.no_grad():
        Recorder(gm).run(*[x.clone() for x in example_inputs])
    return lengths


def _safetensors_bytes(tensors, metadata):
    """The safetensors layout: an 8-byte little-endian header size, the JSON header, the data.

    The data starts 8-byte aligned and the tensors follow in decreasing element size (as
    safetensors' own writer orders them), so every tensor starts aligned to its element and
    the runtime views it in place instead of copying it.
    """
    header = {"__metadata__": metadata}
    blobs = []
    offset = 0
    for name, t in sorted(tensors.items(), key=lambda kv: -kv[1].element_size()):
        t = t.detach().to("cpu").contiguous()
        st_dtype = _DTYPES.get(t.dtype, (None,))[0]
        if st_dtype is None:
            raise ExportError(f"tensor {name}: dtype {t.dtype} has no Tessera equivalent")
        data = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": st_dtype, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":"), allow_nan=False).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned, as safetensors pads
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def _trace(program, inputs, input_names, lock):
    """make_fx's graph of `program` on `inputs`, as the format's graph (without its name and
    producer), and its constants (value name -> tensor) as they were before the trace ran."""
    # The traced constants are the program's own tensors (its weights, its buffers), which the
    # trace itself may write (batch norm's statistics in training mode): each is kept as it was
    # before, so that the file's example run starts where the program's did.
    state = _state(program)
    before = {} if state is None else {
        live.data_ptr(): state[k] for k, live in program.state_dict(keep_vars=True).items()}
    with torch.enable_grad():  # fused fast paths off (the module's docstring)
        gm = make_fx(program)(*inputs)
    _remove_dead_nodes(gm.graph)
    writer = _Writer(gm, input_names, lock, _list_lengths(gm, inputs))
    outputs = writer.run()
    writer.constants = {k: before.get(t.data_ptr(), t).clone()
                        for k, t in writer.constants.items()}
    graph = {
        "inputs": [{"name": n, "dtype": _dtype_name(x.dtype), "sizes": list(x.shape)}
                   for n, x in zip(input_names, inputs)],
        "nodes": writer.nodes,
        "outputs": outputs,
    }
    return graph, writer.constants


def _check_inputs(inputs, what):
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    inputs = tuple(inputs)
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor):
            raise ExportError(f"{what} {i}: expected a tensor, got {type(x).__name__}")
    return inputs


def export(program, example_inputs, path, *, input_names=None, output_names=None,
           ops_lock=None, name=None, dynamic_dims=None, inputs_at=None):
    """Traces `program` on `example_inputs` and writes the model file `path`.

    program: an nn.Module or a function of tensors returning a tensor or a list/tuple/dict of
    them. example_inputs: a tuple of tensors. input_names / output_names: the names the file
    gives them ("input0", ... / "output0", ... when not given). ops_lock: the ops.lock to name
    ops by (the installed one when not given).
    dynamic_dims: {name: (min, max)} (max None: unbounded), dims the file serves every size of
    in that range (docs/model_format.md, "Dynamic dims"); then inputs_at(**sizes) must return
    the program's inputs at those sizes of the dims (a tuple of tensors, as example_inputs), and
    the example inputs are one such set.
    Returns the graph as a dict (what the file's metadata holds).
    """
    example_inputs = _check_inputs(example_inputs, "example input")
    input_names = list(input_names or [f"input{i}" for i in range(len(example_inputs))])
    if len(input_names) != len(example_inputs):
        raise ExportError(f"expected {len(example_inputs)} input names, got {len(input_names)}")
    lock = schemas.read_ops_lock(ops_lock)

    fitted = None
    if dynamic_dims is not None:
        fitted = _fit_dynamic_dims(program, example_inputs, input_names, lock, dynamic_dims,
                                   inputs_at)
    # The example: traced (its constants as they were before), then, from the same state, run
    # eagerly for the expected outputs: the file's example run is the program's one run, and
    # the module is left as that run leaves it.
    state = _state(program)
    graph, constants = _trace(program, example_inputs, input_names, lock)
    _restore(program, state)
    with torch.enable_grad():
        expected = _flatten(program(*[x.clone() for x in example_inputs]), "program output")
    if fitted is not None:
        graph = fitted(graph, constants)
    outputs = graph.pop("outputs")
    if len(outputs) != len(expected):
        raise ExportError(f"the traced graph has {len(outputs)} outputs, the eager run "
                          f"{len(expected)}")
    output_names = list(output_names or [f"output{i}" for i in range(len(outputs))])
    if len(output_names) != len(outputs):
        raise ExportError(f"expected {len(outputs)} output names, got {len(output_names)}")

    version = FORMAT_VERSION if "dims" in graph else 1
    graph = dict({
        "name": name or getattr(type(program), "__name__", "program"),
        "producer": f"tessera_export {version} (torch {torch.__version__})",
        "op_set": lock.version,
    }, **({"dims": graph.pop("dims")} if "dims" in graph else {}), **graph)
    graph["outputs"] = [{"name": n, "value": v} for n, v in zip(output_names, outputs)]
    tensors = {}
    for cname, t in constants.items():
        tensors[f"constant/{cname}"] = t
    for n, x in zip(input_names, example_inputs):
        tensors[f"input/{n}"] = x
    for n, y in zip(output_names, expected):
        tensors[f"expected/{n}"] = y
    metadata = {"format": FORMAT, "format_version": str(version),
                "graph": json.dumps(graph, separators=(",", ":"), allow_nan=False)}
    blob = _safetensors_bytes(tensors, metadata)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(blob)
    os.replace(tmp, path)  # a reader never sees half a file
    return graph


def _state(program):
    """A copy of a module's state (parameters and buffers), to put back with _restore."""
    if not isinstance(program, torch.nn.Module):
        return None
    return {k: v.detach().clone() for k, v in program.state_dict(keep_vars=True).items()}


def _restore(program, state):
    if state is None:
        return
    with torch.no_grad():
        for k, v in program.state_dict(keep_vars=True).items():
            v.copy_(state[k])


def _fit_dynamic_dims(program, example_inputs, input_names, lock, dynamic_dims, inputs_at):
    """Fits the program's size-dependent integers as expressions in the dims (dims.py).

    Returns finish(example_graph, example_constants): the fitted graph, once the example's own
    trace is checked against it. Each trace and run of the fit starts from the module's state as
    it came (a program that writes its state, batch norm in training mode, would otherwise
    trace other constants each time), and the state is put back after.
    """
    if not callable(inputs_at):
        raise ExportError("dynamic_dims needs inputs_at: a function of the dims' sizes "
                          "(inputs_at(**sizes)) returning the program's inputs at those sizes")
    state = _state(program)

    def inputs_for(sizes):
        inputs = _check_inputs(inputs_at(**sizes), f"inputs_at({sizes}) input")
        if len(inputs) != len(example_inputs):
            raise ExportError(f"inputs_at({sizes}) returned {len(inputs)} inputs, the example "
                              f"has {len(example_inputs)}")
        return inputs

    def trace(sizes):
        _restore(program, state)
        return _trace(program, inputs_for(sizes), input_names, lock)

    def arg_names(node):
        return schemas.argument_names(node["schema"])

    def agrees(graph, constants, sizes):
        inputs = inputs_for(sizes)
        _restore(program, state)
        with torch.enable_grad():
            want = _flatten(program(*[x.clone() for x in inputs]), "program output")
        try:
            got = replay.run(graph, constants, inputs, sizes)
            if len(got) != len(want):
                raise ValueError(f"the graph gives {len(got)} outputs, the program {len(want)}")
            for k, (g, w) in enumerate(zip(got, want)):
                torch.testing.assert_close(g, w.detach(), msg=lambda m: f"output {k}: {m}")
        except Exception as e:  # any failure of the replay is a disagreement
            raise dynamic.DimsError(f"at sizes {sizes}: {e}") from None

    try:
        graph, sources, check = dynamic.fit_graph(trace, dynamic_dims, arg_names, agrees)
    except dynamic.DimsError as e:
        raise ExportError(f"dynamic dims: {e}") from None
    finally:
        _restore(program, state)

    def finish(example_graph, example_constants):
        # The example's sizes: each dim read off its input axis, as a run reads it.
        after = _state(program)  # as the example's run left it, put back after the check
        sizes = {}
        try:
            for d in graph["dims"]:
                name = d["name"]
                i, a = sources[name]
                sizes[name] = example_inputs[i].shape[a]
                if not d["min"] <= sizes[name] <= d.get("max", sizes[name]):
                    raise dynamic.DimsError(
                        f"the example inputs have {name} = {sizes[name]}, outside its range "
                        f"[{d['min']}, {d.get('max', 'unbounded')}]")
            check(sizes, example_graph, example_constants)
        except dynamic.DimsError as e:
            raise ExportError(f"dynamic dims: {e}") from None
        finally:
            _restore(program, after)  # the check may have run the program
        return graph

    return finish
