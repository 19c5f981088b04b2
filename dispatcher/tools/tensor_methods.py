#!/usr/bin/env python3
"""Writes dispatcher/tensor_methods.txt: the ops of dispatcher/ops.lock that ATen offers as
Tensor methods (their native_functions.yaml entry's `variants` names `method`), one op name a
line. tessera_ops_lock --sdk-ops makes each a method of the C++ SDK's Tensor (x.view({2, 3}),
x.relu_()); docs/op_schema_policy.md, "Tensor methods".

    python3 dispatcher/tools/tensor_methods.py [--yaml NATIVE_FUNCTIONS_YAML] [--check]

NATIVE_FUNCTIONS_YAML is PyTorch's; by default the installed PyTorch's (torchgen's packaged
copy; Debian's python3-torch has it). With --check, writes nothing and exits 1 when the
checked-in list differs from what it would write (the ctest tessera_tensor_methods_list).
"""
import os
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOCK = os.path.join(ROOT, "dispatcher", "ops.lock")
LIST = os.path.join(ROOT, "dispatcher", "tensor_methods.txt")

HEADER = """\
# Tessera's Tensor methods: the ops of ops.lock that ATen offers as Tensor methods (their
# native_functions.yaml entry's `variants` names `method`), one op name a line. Written by
# dispatcher/tools/tensor_methods.py from PyTorch's native_functions.yaml; do not edit by hand.
# tessera_ops_lock --sdk-ops declares each in tessera/sdk/tensor_methods.inc (inside
# sdk::Tensor) and defines it in tessera/sdk/ops.hpp (docs/op_schema_policy.md).
"""


def method_ops(yaml_path):
    with open(yaml_path) as f:
        entries = yaml.safe_load(f)
    out = set()
    for e in entries:
        variants = [v.strip() for v in str(e.get("variants", "function")).split(",")]
        if "method" in variants:
            out.add(e["func"].split("(", 1)[0])
    return out


def lock_ops():
    out = set()
    with open(LOCK) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            out.add(line.split(" ", 1)[1].split("(", 1)[0])
    return out


def installed_yaml():
    try:
        import torchgen
    except ImportError:
        sys.exit(f"{sys.executable} has no torchgen: install python3-torch (Debian), or pass "
                 "--yaml NATIVE_FUNCTIONS_YAML")
    return os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native",
                        "native_functions.yaml")


def main(argv):
    args = argv[1:]
    check = "--check" in args
    if check:
        args.remove("--check")
    if args and (len(args) != 2 or args[0] != "--yaml"):
        print(__doc__, file=sys.stderr)
        return 2
    yaml_path = args[1] if args else installed_yaml()
    text = HEADER + "".join(n + "\n" for n in sorted(method_ops(yaml_path) & lock_ops()))
    if check:
        with open(LIST) as f:
            if f.read() == text:
                print(f"ok: {LIST} is the methods of {yaml_path}")
                return 0
        print(f"{LIST}: expected the ops.lock ops that {yaml_path} makes methods, found another "
              f"list; regenerate it with {argv[0]} (without --check)")
        return 1
    with open(LIST, "w") as f:
        f.write(text)
    print("wrote", LIST)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
