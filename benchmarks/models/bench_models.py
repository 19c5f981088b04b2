"""The whole-model benchmarks' models, each written twice: for Tessera and for libtorch.

    /usr/bin/python3 benchmarks/models/bench_models.py OUT_DIR [NAME ...]

writes OUT_DIR/NAME.tsrm (tessera_export) and OUT_DIR/NAME.pt (torch.jit.trace of the same
module, same weights, same example inputs) for each model (all when none are named). The
libtorch side of tessera_model_peer_benchmark runs the .pt file with the graph executor's
optimizations off, so libtorch runs the traced ATen calls one by one as eager PyTorch would,
without Python's per-op cost. Weights come from a fixed seed; nothing is downloaded.

The models are the ones the CPU-speed issue measured: ResNet-18 and MobileNetV3-small at batch
1 and 8, a BERT-base
encoder layer (hidden 768, 128 tokens) at batch 1 and 8, and a GPT-2-style decode step over a
31-token KV cache at hidden 768 (12 heads) and hidden 96 (4 heads, tiny tensors: per-op cost).
"""

import os
import warnings
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "models"))
import zoo  # noqa: E402  (puts tools/exporter on the path too)
import tessera_export  # noqa: E402


def resnet18(batch):
    import torchvision
    return lambda: (torchvision.models.resnet18(), (torch.randn(batch, 3, 224, 224),))


def mobilenet_v3_small(batch):
    import torchvision
    return lambda: (torchvision.models.mobilenet_v3_small(), (torch.randn(batch, 3, 224, 224),))


def bert(batch, tokens=128):
    def make():
        mask = torch.ones(batch, tokens)
        mask[-1, tokens * 3 // 4:] = 0
        return zoo.BertLayer(), (torch.randn(batch, tokens, 768), mask)
    return make


def gpt2(hidden, heads, past=31):
    def make():
        d = hidden // heads
        return zoo.Gpt2Step(hidden, heads), (torch.randn(1, 1, hidden),
                                            torch.randn(1, heads, past, d),
                                            torch.randn(1, heads, past, d))
    return make


MODELS = {
    "resnet18_b1": resnet18(1),
    "resnet18_b8": resnet18(8),
    "mobilenet_v3_small_b1": mobilenet_v3_small(1),
    "mobilenet_v3_small_b8": mobilenet_v3_small(8),
    "bert_b1": bert(1),
    "bert_b8": bert(8),
    "gpt2_h768": gpt2(768, 12),
    "gpt2_h96": gpt2(96, 4),
}


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir, names = argv[1], argv[2:] or list(MODELS)
    os.makedirs(out_dir, exist_ok=True)
    for name in names:
        if name not in MODELS:
            print(f"bench_models.py: unknown model '{name}' (expected one of "
                  f"{', '.join(MODELS)})", file=sys.stderr)
            return 2
        torch.manual_seed(0)
        net, inputs = MODELS[name]()
        net = net.eval()
        tessera_export.export(net, inputs, os.path.join(out_dir, f"{name}.tsrm"), name=name)
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore", torch.jit.TracerWarning)  # the constant 1/sqrt(d)
            traced = torch.jit.trace(net, inputs, check_trace=False)
        traced.save(os.path.join(out_dir, f"{name}.pt"))
        print(f"wrote {name}.tsrm and {name}.pt")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
