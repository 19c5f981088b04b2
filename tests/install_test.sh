#!/bin/sh
# install_test.sh BUILD_DIR SOURCE_DIR: install into a temporary prefix, check that every path
# the docs name in the install exists, then do what the guides tell a vendor and an embedder to
# do, against the installed tree only: build the installed examples with find_package(Tessera) +
# tessera_add_plugin() and with pkg-config, run them, and run the installed `conformance` on the
# plugin built out of tree.
set -eu
build="$1"
src=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$prefix" > "$work/install.log"

# 1. The install's contents. docs/cmake_package.md's table "What the install contains" is the
# list; beyond it, every installed path any doc names in backquotes (`lib/...`, `share/...`,
# `bin/...`, `include/...`; paths under build/ or with placeholders are not install paths).
listed=$(sed -n '/^## What the install contains/,/^## /p' "$src/docs/cmake_package.md" |
         sed -n 's/^| `\([^`]*\)`.*/\1/p')
[ -n "$listed" ] || fail "docs/cmake_package.md has no table 'What the install contains'"
named=$(grep -oh '`\(bin\|lib\|include\|share\)/[^` ]*`' "$src"/docs/*.md "$src/README.md" |
        tr -d '`' | grep -v '[*<>]\|\.\.\.' | sort -u)
missing=""
for f in $listed $named; do
  [ -e "$prefix/$f" ] || missing="$missing $f"
done
[ -z "$missing" ] || fail "the installation lacks what the docs name:$missing"
[ ! -e "$prefix/lib/tessera/plugins/libnpu.so" ] ||
  fail "the sample plugin is installed where default discovery loads it"
echo "ok: the install holds the $(echo "$listed" | wc -l) paths of docs/cmake_package.md" \
     "and the $(echo "$named" | wc -l) install paths the docs name"

# 2. pkg-config: normalised paths; a C plugin and a C application built with tessera-plugin.pc
# and tessera.pc from the installed examples' sources.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
for pc in tessera tessera-plugin; do
  flags=$(pkg-config --cflags --libs $pc)
  echo "ok: pkg-config $pc: $flags"
  case "$flags" in *..*) fail "pkg-config $pc gives unnormalised paths: $flags" ;; esac
done
case "$(pkg-config --libs tessera-plugin)" in *-ltessera*) fail "tessera-plugin.pc links the runtime" ;; esac
examples="$prefix/share/tessera/examples"
mkdir "$work/pc"
cc -std=c99 -Wall -Werror $(pkg-config --cflags tessera-plugin) "$examples/c/c_plugin.c" \
   $(pkg-config --libs tessera-plugin) -o "$work/pc/libcdemo.so"
cc -std=c99 -Wall -Werror $(pkg-config --cflags tessera) "$examples/c/c_embedding.c" \
   $(pkg-config --libs tessera) -Wl,-rpath,"$(pkg-config --variable=libdir tessera)" \
   -o "$work/pc/c_embedding"
# The sample C++ plugin, by docs/cmake_package.md's commands (its C kernels compiled as C).
cc -std=c99 -Wall -Werror $(pkg-config --cflags tessera-plugin) -c "$examples/npu/npu_c_kernels.c" \
   -o "$work/pc/npu_c_kernels.o"
c++ -std=c++17 -fvisibility-inlines-hidden -Wall -Werror $(pkg-config --cflags tessera-plugin) \
    "$examples/npu/npu_device.cc" "$examples/npu/npu_graph.cc" "$examples/npu/npu_plugin.cc" \
    "$work/pc/npu_c_kernels.o" \
    $(pkg-config --libs tessera-plugin) -o "$work/pc/libnpu.so"
"$src/stable_abi/tests/check_plugin_symbols.sh" "$work/pc/libcdemo.so"
"$src/stable_abi/tests/check_plugin_symbols.sh" "$work/pc/libnpu.so"
"$work/pc/c_embedding" "$work/pc/libcdemo.so" > "$work/pc/run.log" ||
  { cat "$work/pc/run.log"; fail "the pkg-config-built C example"; }
echo "ok: built the C plugin, the sample C++ plugin and the C application with pkg-config," \
     "and ran the C ones (the C++ one runs in step 4)"

# 3. CMake, as docs/cmake_package.md says: the installed examples' own projects (the sample
# plugin in C++, a C plugin and a C application in a C-only project), each plugin built with
# tessera_add_plugin(), and a C++ application (tests/install_consumer), all with
# find_package(Tessera CONFIG).
cmake_project() {  # SOURCE_DIR BUILD_DIR [cmake args]
  s="$1" b="$2"
  shift 2
  cmake -S "$s" -B "$b" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" "$@" > "$b.configure.log" 2>&1 ||
    { cat "$b.configure.log"; fail "configuring $s"; }
  cmake --build "$b" > "$b.build.log" 2>&1 || { cat "$b.build.log"; fail "building $s"; }
}
cmake_project "$examples/npu" "$work/npu"
cmake_project "$examples/c" "$work/c"
cmake_project "$src/tests/install_consumer" "$work/consumer"
npu="$work/npu/libnpu.so"
echo "ok: built the installed examples and an application out of tree with CMake"
"$src/stable_abi/tests/check_plugin_symbols.sh" "$npu"
"$src/stable_abi/tests/check_plugin_symbols.sh" "$work/c/libcdemo.so"

# tessera_add_plugin() embedded the plugins' manifests with the installed tessera-plugin-info,
# which reads them back without loading the plugins.
for plugin in "$npu:npu" "$work/c/libcdemo.so:cdemo"; do
  "$prefix/bin/tessera-plugin-info" "${plugin%:*}" > "$work/manifest.txt" ||
    { cat "$work/manifest.txt"; exit 1; }
  grep -q "plugin:   *${plugin##*:}" "$work/manifest.txt" ||
    { cat "$work/manifest.txt"; fail "no manifest of ${plugin##*:}"; }
done
echo "ok: the out-of-tree plugins carry their manifests"

# Default discovery alone: the CPU backend, and no npu (the installed sample is not in
# lib/tessera/plugins).
"$work/consumer/consumer_app" --no-npu
# The out-of-tree plugin through TESSERA_PLUGIN_PATH; the application checks where it came from.
TESSERA_PLUGIN_PATH="$work/npu" "$work/consumer/consumer_app" "$npu"
"$work/c/c_embedding" "$work/c/libcdemo.so" > "$work/c.log" ||
  { cat "$work/c.log"; fail "the CMake-built C example"; }
echo "ok: the CMake-built C application ran the CMake-built C plugin"
# TESSERA_NO_DEFAULT_PLUGINS=1: no CPU backend, so the C application's add.Tensor is refused.
if TESSERA_NO_DEFAULT_PLUGINS=1 "$work/c/c_embedding" > "$work/nodefault.log" 2>&1; then
  cat "$work/nodefault.log"; fail "TESSERA_NO_DEFAULT_PLUGINS=1 still loaded the CPU backend"
fi
echo "ok: TESSERA_NO_DEFAULT_PLUGINS=1 switches default discovery off in the installed runtime"

# 4. The installed conformance on the plugin built out of tree (a few ops, for time).
"$prefix/bin/conformance" --plugin "$npu" --op '^(add\.Tensor|neg|mul\.Tensor)$' \
  --dtype float32,int64 --json "$work/npu.json" > "$work/conformance.log" 2>&1 ||
  { cat "$work/conformance.log"; fail "installed conformance --plugin $npu"; }
grep -q '"device": *"npu"' "$work/npu.json" ||
  { cat "$work/conformance.log"; fail "conformance did not test the npu device"; }
echo "ok: the installed conformance passed the out-of-tree npu plugin:" \
     "$(grep -c '' "$work/conformance.log") lines of output"
"$prefix/bin/conformance" --plugin "$work/pc/libnpu.so" --op '^neg$' --dtype float32 \
  > "$work/conformance_pc.log" 2>&1 ||
  { cat "$work/conformance_pc.log"; fail "installed conformance --plugin of the pkg-config npu"; }
echo "ok: the installed conformance passed the npu plugin built with pkg-config"

# Same-major compatibility: asking for Tessera 2 must fail.
if cmake -S "$src/tests/install_consumer" -B "$work/consumer2" -G Ninja \
     -DCMAKE_PREFIX_PATH="$prefix" -DTESSERA_VERSION_WANTED=2.0 > "$work/configure2.log" 2>&1; then
  fail "find_package(Tessera 2.0) accepted a 1.x installation"
fi
echo "ok: find_package(Tessera 2.0) refuses the 1.x package"
