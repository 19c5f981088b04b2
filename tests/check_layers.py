#!/usr/bin/env python3
"""The dependency rule of DESIGN.md's layers, checked on every #include "..." of the tree.

Each folder may include only the folders below it (and itself); a folder's tests may include
test frameworks and the layers they test through. Prints every include that runs back up, with
its file and line, and exits 1 if there is one.

    tests/check_layers.py [SOURCE_DIR]
    tests/check_layers.py --selftest   (plants include that run back up in a scratch tree and
                                        checks that each is found)

An include of a bare file name ("pointwise.hpp") is the folder's own and is not checked.
"""
import os
import re
import sys

# The contract: the C ABI headers, the op-set headers, the header-only base.
CONTRACT = {"tessera/c", "tessera/base", "tessera/opset"}
SDK = CONTRACT | {"tessera/sdk"}
TESTING = {"gtest", "gmock"}

# Folder -> what its code may include (by first path component, or tessera/<part>). The first
# prefix that matches a file's path decides. "tests" rules apply to a folder's tests/ and to
# *_test.cc files: what the layer allows, plus these.
RULES = [
    # folder prefix, allowed for code, extra for tests
    ("stable_abi/include/", CONTRACT, set()),
    ("stable_abi/", CONTRACT, TESTING),
    ("core/", CONTRACT | {"core", "absl"}, TESTING),
    ("dispatcher/internal/", CONTRACT | {"core", "absl", "dispatcher"}, TESTING),
    ("dispatcher/", CONTRACT | {"core", "absl", "dispatcher"}, TESTING),
    # The runtime host: the dispatcher through its public headers only (dispatcher/internal/
    # is refused below), never the SDK (a layer above it).
    ("runtime/", CONTRACT | {"core", "absl", "dispatcher", "runtime"}, TESTING | {"tessera/sdk"}),
    ("sdk/include/", SDK, set()),
    ("sdk/examples/", SDK, TESTING),
    ("sdk/", SDK, TESTING | {"core", "runtime"}),
    # Plugins: the contract and the SDK only; they link nothing of the runtime (DESIGN.md).
    ("plugins/", SDK | {"oneapi"}, TESTING),  # oneapi: oneDNN, which the CPU backend links
    ("examples/", SDK, set()),
    # conformance/ uses the public embedding API only, as a vendor's CI would.
    ("conformance/", SDK | {"conformance", "tessera/conformance"}, TESTING),
    ("tools/", SDK | {"conformance", "tools"}, TESTING),
]
# Folders above every layer (tests of the whole, benchmarks, fuzzers) may include anything.
UNCHECKED = ("tests/", "benchmarks/", "fuzz/", "build")
INTERNAL = "dispatcher/internal/"  # only the dispatcher itself includes these

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = (".h", ".hpp", ".cc", ".c", ".cu", ".cuh")


def root_of(path):
    parts = path.split("/")
    if parts[0] == "tessera" and len(parts) > 2:
        return "tessera/" + parts[1]
    return parts[0]


def is_test(rel):
    return "/tests/" in rel or rel.endswith("_test.cc") or rel.endswith("_test.c")


def check(top):
    problems = []
    checked = 0
    for dirpath, dirnames, filenames in os.walk(top):
        rel_dir = os.path.relpath(dirpath, top)
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and not d.startswith("build")]
        for name in sorted(filenames):
            if not name.endswith(SOURCES):
                continue
            rel = os.path.normpath(os.path.join(rel_dir, name))
            if rel.startswith(UNCHECKED):
                continue
            rule = next((r for r in RULES if rel.startswith(r[0])), None)
            if rule is None:
                problems.append(f"{rel}: in no layer of tests/check_layers.py (add its folder)")
                continue
            allowed = rule[1] | (rule[2] if is_test(rel) else set())
            with open(os.path.join(dirpath, name), encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m or "/" not in m.group(1):
                        continue
                    target = m.group(1)
                    checked += 1
                    if target.startswith(INTERNAL) and not rel.startswith("dispatcher/"):
                        problems.append(f"{rel}:{number}: includes {target}: dispatcher/internal/ "
                                        "is the dispatcher's own; use its public headers")
                    elif root_of(target) not in allowed:
                        problems.append(f"{rel}:{number}: includes {target}: {rule[0]} may "
                                        f"include only {', '.join(sorted(allowed))}")
    return checked, problems


# What the self-test plants, each a file and an include that must be found (and one that may).
PLANTED = [
    ("core/bad.h", '#include "tessera/sdk/tensor.hpp"', True),     # core above the SDK
    ("core/good.h", '#include "tessera/base/dtypes.hpp"', False),
    ("runtime/bad.cc", '#include "dispatcher/internal/operator_entry.h"', True),
    ("runtime/bad2.cc", '#include "tessera/sdk/plugin.hpp"', True),  # the host above the SDK
    ("runtime/tests/ok_test.cc", '#include "tessera/sdk/runtime.hpp"', False),
    ("dispatcher/bad.cc", '#include "runtime/handles.h"', True),
    ("plugins/cpu/bad.cc", '#include "core/tensor.h"', True),       # a plugin linking the runtime
    ("sdk/include/tessera/sdk/bad.hpp", '#include "dispatcher/value.h"', True),
    ("stable_abi/include/tessera/base/bad.hpp", '#include "core/dtype.h"', True),
    ("conformance/bad.cc", '#include "dispatcher/op_registry.h"', True),
    ("tools/plugin_info/bad.cc", '#include "core/tensor.h"', True),  # a tool on the runtime's insides
    ("newfolder/x.cc", '#include "core/x.h"', True),                  # a folder of no layer
]


def selftest():
    import tempfile
    with tempfile.TemporaryDirectory() as top:
        for path, line, _ in PLANTED:
            os.makedirs(os.path.join(top, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(top, path), "w") as f:
                f.write(line + "\n")
        _, problems = check(top)
        failed = 0
        for path, line, bad in PLANTED:
            found = any(p.startswith(path + ":") for p in problems)
            if found != bad:
                print(f"selftest: {path} ({line}) was {'not ' if bad else ''}reported")
                failed += 1
        print(f"check_layers selftest: {len(PLANTED) - failed} passed, {failed} failed")
        return 1 if failed else 0


def main():
    if sys.argv[1:] == ["--selftest"]:
        return selftest()
    top = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                          os.path.join(os.path.dirname(__file__), ".."))
    checked, problems = check(top)
    for p in problems:
        print(p)
    print(f"check_layers: {checked} includes checked, {len(problems)} against the dependency rule")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
