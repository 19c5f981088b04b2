"""The model zoo: in-tree model definitions, weights from a fixed seed, exported for tessera-run.

    /usr/bin/python3 tests/models/zoo.py OUT_DIR [NAME ...]

writes OUT_DIR/NAME.tsrm for each model (all when none are named). Nothing is downloaded: the
torchvision models are built with random weights. Each model is in eval mode (a training step,
in training mode) and traced on the example inputs given here.
"""

import math
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "exporter"))
import tessera_export  # noqa: E402


def mlp():
    net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    return net, (torch.randn(8, 16),)


def resnet18():
    import torchvision
    return torchvision.models.resnet18(), (torch.randn(1, 3, 224, 224),)


def mobilenet_v3_small():
    # hardswish and hardsigmoid (op set 1.2) in its blocks and squeeze-excitation.
    import torchvision
    return torchvision.models.mobilenet_v3_small(), (torch.randn(1, 3, 224, 224),)


def vit():
    # A reduced torchvision VisionTransformer: 32x32 images, 8x8 patches, 2 layers.
    import torchvision
    net = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2,
                                               num_heads=2, hidden_dim=32, mlp_dim=64,
                                               num_classes=10)
    return net, (torch.randn(2, 3, 32, 32),)


class BertLayer(torch.nn.Module):
    """A BERT-base encoder layer (hidden 768, 12 heads) with an additive attention mask."""

    def __init__(self, hidden=768, heads=12, ffn=3072):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(hidden, 3 * hidden)
        self.proj = torch.nn.Linear(hidden, hidden)
        self.norm1 = torch.nn.LayerNorm(hidden, eps=1e-12)
        self.ffn1 = torch.nn.Linear(hidden, ffn)
        self.ffn2 = torch.nn.Linear(ffn, hidden)
        self.norm2 = torch.nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, mask):
        b, t, h = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / math.sqrt(h // self.heads)
        scores = scores + (1.0 - mask[:, None, None, :]) * -10000.0
        ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, h)
        x = self.norm1(x + self.proj(ctx))
        return self.norm2(x + self.ffn2(torch.nn.functional.gelu(self.ffn1(x))))


def bert_layer():
    mask = torch.ones(2, 32)
    mask[1, 20:] = 0
    return BertLayer(), (torch.randn(2, 32, 768), mask)


def bert_layer_dynamic():
    # The BERT layer, one file for every batch in [1, 64] and sequence length in [1, 512].
    def inputs_at(batch, seq):
        mask = torch.ones(batch, seq)
        mask[-1, seq // 2 + 1:] = 0
        return torch.randn(batch, seq, 768), mask
    return BertLayer(), inputs_at(2, 32), {"batch": (1, 64), "seq": (1, 512)}, inputs_at


class Gpt2Step(torch.nn.Module):
    """One GPT-2-style decoder step: a new token's hidden state attends to a KV cache."""

    def __init__(self, hidden=256, heads=4):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(hidden)
        self.qkv = torch.nn.Linear(hidden, 3 * hidden)
        self.proj = torch.nn.Linear(hidden, hidden)
        self.norm2 = torch.nn.LayerNorm(hidden)
        self.fc = torch.nn.Linear(hidden, 4 * hidden)
        self.out = torch.nn.Linear(4 * hidden, hidden)

    def forward(self, x, past_k, past_v):
        b, _, h = x.shape
        d = h // self.heads
        q, k, v = self.qkv(self.norm1(x)).split(h, dim=-1)
        q, k, v = (t.view(b, 1, self.heads, d).transpose(1, 2) for t in (q, k, v))
        k = torch.cat([past_k, k], dim=2)
        v = torch.cat([past_v, v], dim=2)
        att = (q @ k.transpose(-1, -2) / math.sqrt(d)).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, 1, h)
        x = x + self.proj(y)
        x = x + self.out(torch.nn.functional.gelu(self.fc(self.norm2(x)), approximate="tanh"))
        return x, k, v


def gpt2_step():
    return Gpt2Step(), (torch.randn(1, 1, 256), torch.randn(1, 4, 31, 64), torch.randn(1, 4, 31, 64))


def gpt2_step_dynamic():
    # The decoder step, one file for every KV cache length in [1, 1024].
    def inputs_at(past):
        return torch.randn(1, 1, 256), torch.randn(1, 4, past, 64), torch.randn(1, 4, past, 64)
    return Gpt2Step(), inputs_at(31), {"past": (1, 1024)}, inputs_at


def resnet18_dynamic():
    # ResNet-18, one file for every batch in [1, 32].
    import torchvision
    def inputs_at(batch):
        return (torch.randn(batch, 3, 224, 224),)
    return torchvision.models.resnet18(), inputs_at(2), {"batch": (1, 32)}, inputs_at


class CnnTrainStep(torch.nn.Module):
    """One training step of a small CNN with an embedding branch: the forward in training mode
    (batch norm on the batch's statistics), the cross-entropy loss, and every parameter's
    gradient (torch.autograd.grad, traced with the rest): convolution_backward (strided,
    grouped), native_batch_norm_backward, max_pool2d_with_indices_backward,
    avg_pool2d_backward, embedding_dense_backward, the loss's backward ops."""

    trains = True  # zoo.py leaves it in training mode

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.norm = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, stride=2, groups=2)
        self.embed = torch.nn.Embedding(20, 8, padding_idx=0)
        self.fc = torch.nn.Linear(8 * 2 * 2 + 8, 10)

    def forward(self, x, tokens, target):
        y = torch.nn.functional.max_pool2d(torch.relu(self.norm(self.conv1(x))), 2)
        y = torch.nn.functional.avg_pool2d(torch.relu(self.conv2(y)), 2, ceil_mode=True)
        features = torch.cat([y.flatten(1), self.embed(tokens).mean(1)], 1)
        loss = torch.nn.functional.cross_entropy(self.fc(features), target)
        return (loss,) + torch.autograd.grad(loss, list(self.parameters()))


def cnn_train_step():
    tokens = torch.tensor([[3, 0, 7, 3], [1, 19, 0, 5]])
    return CnnTrainStep(), (torch.randn(2, 3, 16, 16), tokens, torch.tensor([4, 9]))


ZOO = {"mlp": mlp, "resnet18": resnet18, "mobilenet_v3_small": mobilenet_v3_small, "vit": vit,
       "bert_layer": bert_layer, "gpt2_step": gpt2_step, "cnn_train_step": cnn_train_step,
       "bert_layer_dynamic": bert_layer_dynamic, "gpt2_step_dynamic": gpt2_step_dynamic,
       "resnet18_dynamic": resnet18_dynamic}


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir, names = argv[1], argv[2:] or list(ZOO)
    os.makedirs(out_dir, exist_ok=True)
    for name in names:
        if name not in ZOO:
            print(f"zoo.py: unknown model '{name}' (expected one of {', '.join(ZOO)})",
                  file=sys.stderr)
            return 2
        torch.manual_seed(0)
        net, inputs, *dynamic = ZOO[name]()
        # The *_dynamic models also give their dims and inputs at other sizes (made after the
        # weights, so a model's weights do not depend on the sizes traced).
        options = dict(zip(("dynamic_dims", "inputs_at"), dynamic))
        if not getattr(net, "trains", False):
            net.eval()
        start = time.monotonic()
        tessera_export.export(net, inputs, os.path.join(out_dir, f"{name}.tsrm"), name=name,
                              **options)
        print(f"exported {name} in {time.monotonic() - start:.2f} s (tracing and writing)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
