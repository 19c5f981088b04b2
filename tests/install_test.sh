#!/bin/sh
# install_test.sh BUILD_DIR SOURCE_DIR: install, then build and run a consumer out of tree.
set -eu
build="$1"
src=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

cmake --install "$build" --prefix "$prefix" > "$work/install.log"
for f in include/tessera/c/tessera.h include/tessera/c/plugin.h include/tessera/sdk/plugin.hpp \
         include/tessera/sdk/runtime.hpp lib/libtessera.so lib/tessera/plugins/libtessera_cpu.so \
         lib/tessera/examples/libnpu.so bin/tessera-plugin-info \
         lib/cmake/Tessera/TesseraConfig.cmake lib/cmake/Tessera/TesseraConfigVersion.cmake \
         lib/cmake/Tessera/TesseraTargets.cmake lib/cmake/Tessera/plugin_exports.map \
         lib/pkgconfig/tessera.pc; do
  if [ ! -e "$prefix/$f" ]; then
    echo "FAIL: the installation lacks $f"
    exit 1
  fi
done
if [ -e "$prefix/lib/tessera/plugins/libnpu.so" ]; then
  echo "FAIL: the sample plugin is installed where default discovery loads it"
  exit 1
fi
echo "ok: installed headers, libtessera.so, tessera-plugin-info, the CPU plugin, lib/tessera/examples/libnpu.so, the CMake package and tessera.pc"

# pkg-config sees the package.
if command -v pkg-config > /dev/null; then
  flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs tessera)
  echo "ok: pkg-config tessera: $flags"
fi

# The consumer: libnpu.so rebuilt from the sample's sources and an application, both against
# the installed package only.
cmake -S "$src/tests/install_consumer" -B "$work/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" -DNPU_SOURCE_DIR="$src/sdk/examples/npu" > "$work/configure.log" ||
  { cat "$work/configure.log"; exit 1; }
cmake --build "$work/consumer" > "$work/build.log" || { cat "$work/build.log"; exit 1; }
echo "ok: built the plugin and the application out of tree"

# tessera_add_plugin() embedded the plugin's manifest with the installed tessera-plugin-info,
# which reads it back without loading the plugin.
"$prefix/bin/tessera-plugin-info" "$work/consumer/libnpu.so" > "$work/manifest.txt" ||
  { cat "$work/manifest.txt"; exit 1; }
grep -q "plugin:   *npu" "$work/manifest.txt" || { echo "FAIL: no npu manifest"; cat "$work/manifest.txt"; exit 1; }
echo "ok: the out-of-tree plugin carries its manifest"

# Default discovery alone: the CPU backend, and no npu (the installed sample is not in
# lib/tessera/plugins).
"$work/consumer/consumer_app" --no-npu
# The out-of-tree plugin through TESSERA_PLUGIN_PATH; the application checks where it came from.
TESSERA_PLUGIN_PATH="$work/consumer" "$work/consumer/consumer_app" "$work/consumer/libnpu.so"

# Same-major compatibility: asking for Tessera 2 must fail.
if cmake -S "$src/tests/install_consumer" -B "$work/consumer2" -G Ninja \
     -DCMAKE_PREFIX_PATH="$prefix" -DNPU_SOURCE_DIR="$src/sdk/examples/npu" \
     -DTESSERA_VERSION_WANTED=2.0 > "$work/configure2.log" 2>&1; then
  echo "FAIL: find_package(Tessera 2.0) accepted a 1.x installation"
  exit 1
fi
echo "ok: find_package(Tessera 2.0) refuses the 1.x package"
