#!/usr/bin/env bash
# The main job: install what is missing, build, then run the embedding demo.
# (When the conformance CLI lands, this runs it on the bundled plugins instead.)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

tessera_install_packages
tessera_build
"$TESSERA_BUILD_DIR/bin/tessera_demo"
