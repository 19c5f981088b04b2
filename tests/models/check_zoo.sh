#!/bin/sh
# The model zoo through the whole path: tests/models/zoo.py exports each model from PyTorch
# (weights from a fixed seed, PyTorch's outputs stored in the file), and tessera-run --check runs
# it on the CPU plugin and on the sample npu plugin (whose missing kernels run through the
# fallback) and compares with PyTorch's outputs under assert_close's float32 defaults (the
# *_dynamic models also at other sizes of their dims, dynamic_check.py). The CPU
# runs go once with the unboxed fast path and once without (TESSERA_FAST_PATH=0): compiled nodes
# take the fast path where it serves them, and both ways must agree with PyTorch. A ResNet-18
# forward is recorded (TESSERA_RECORD) and its calls replayed as conformance cases. Last,
# npy_check.py feeds tessera-run a .npy input and reads its saved .npy outputs with NumPy.
#
#   check_zoo.sh PYTHON TESSERA_RUN NPU_PLUGIN OUT_DIR CONFORMANCE
#
# PyTorch and torchvision are requirements of this test, not options: without them it fails,
# naming the Debian packages (scripts/lib/common.sh installs them).
set -eu
python=$1 run=$2 npu=$3 out=$4 conformance=$5
here=$(cd "$(dirname "$0")" && pwd)

if ! "$python" -c 'import torch, torchvision' 2>/dev/null; then
  echo "FAIL: $python cannot import torch and torchvision: install python3-torch and" \
       "python3-torchvision (scripts/test.sh does)" >&2
  exit 1
fi
rm -rf "$out"
"$python" "$here/zoo.py" "$out"

status=0
for model in "$out"/*.tsrm; do
  for target in cpu cpu-boxed npu; do
    fast=1
    case $target in
      cpu) set -- --device cpu ;;
      cpu-boxed) set -- --device cpu; fast=0 ;;
      npu) set -- --plugin "$npu" --device npu:0 ;;
    esac
    if log=$(TESSERA_FAST_PATH=$fast "$run" "$model" "$@" --check 2>&1); then
      echo "ok: $(basename "$model") on $target: $(echo "$log" | grep '^nodes')"
    else
      echo "FAIL: $(basename "$model") on $target:"
      echo "$log" | sed 's/^/  /'
      status=1
    fi
  done
done
# The conformance suite's model checks on the npu sample: every model agrees with PyTorch and
# with the CPU plugin, in the JSON report too.
exported=$(ls "$out"/*.tsrm | wc -l)
if "$conformance" --plugin "$npu" --models "$out" --json "$out/models.json" > "$out/models.log" &&
   "$python" - "$out/models.json" "$exported" <<'PY'
import json, sys
models = json.load(open(sys.argv[1]))["models"]
assert len(models) == int(sys.argv[2]), (len(models), sys.argv[2])
assert all(m["status"] == "pass" and m["agrees_cpu"] and m["agrees_node_by_node"]
           for m in models), models
PY
then
  echo "ok: conformance --models on npu: $(grep -c ' pass ' "$out/models.log") models pass"
else
  echo "FAIL: conformance --models on npu:"
  sed 's/^/  /' "$out/models.log"
  status=1
fi
# ... and on the CPU, whose graph compiler claims the CNNs' convolutions in chains: each model
# with claimed runs agrees with its nodes run one by one (conformance runs both).
if "$conformance" --device cpu --models "$out" --json "$out/models_cpu.json" \
     > "$out/models_cpu.log" &&
   "$python" - "$out/models_cpu.json" <<'PY'
import json, sys
models = {m["model"]: m for m in json.load(open(sys.argv[1]))["models"]}
assert all(m["status"] == "pass" and m["agrees_node_by_node"] for m in models.values()), models
assert models["resnet18"]["claimed"] > 0 and models["mobilenet_v3_small"]["claimed"] > 0, models
PY
then
  echo "ok: conformance --models on cpu: every model passes, claimed runs agree node by node"
else
  echo "FAIL: conformance --models on cpu:"
  sed 's/^/  /' "$out/models_cpu.log"
  status=1
fi

# Recording a ResNet-18 forward (TESSERA_RECORD) and replaying its calls as cases
# (conformance --cases-from) on the CPU plugin and the npu sample: nothing fails, every call
# runs on the CPU's own kernels, and the npu runs some natively and the rest through the fallback.
recording="$out/resnet18.calls.jsonl"
if TESSERA_RECORD="$recording" "$run" "$out/resnet18.tsrm" --device cpu --check > /dev/null; then
  for target in cpu npu; do
    set -- --cases-from "$recording" --json "$out/replay_$target.json"
    [ "$target" = npu ] && set -- "$@" --plugin "$npu"
    if "$conformance" "$@" > "$out/replay_$target.log" &&
       summary=$("$python" - "$out/replay_$target.json" "$target" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["recordings"][0]
assert r["complete"] and r["calls"] > r["distinct"] > 20, r
assert r["failed"] == r["unsupported"] == r["not_replayed"] == r["flaky"] == 0, r
if sys.argv[2] == "cpu":
    assert r["fallback"] == 0 and r["native"] + r["unchecked"] == r["calls"], r
else:
    assert r["fallback"] > 0 and 0.2 < r["native_share"] < 1, r
print("%d calls (%d distinct), %.1f %% native" % (r["calls"], r["distinct"], 100 * r["native_share"]))
PY
)
    then
      echo "ok: resnet18's recorded calls replayed on $target: $summary"
    else
      echo "FAIL: resnet18's recorded calls replayed on $target:"
      sed 's/^/  /' "$out/replay_$target.log"
      status=1
    fi
  done
else
  echo "FAIL: recording resnet18 with TESSERA_RECORD=$recording"
  status=1
fi

# The dynamic-dim models at other sizes than their example's, against PyTorch, and their
# refusals (a size out of range, inputs that disagree on a dim).
"$python" "$here/dynamic_check.py" "$run" "$out" "$npu" || status=1

# tessera-run's .npy inputs and outputs, with NumPy on the other side.
"$python" "$here/npy_check.py" "$run" "$out/mlp.tsrm" "$out/npy" || status=1
exit $status
