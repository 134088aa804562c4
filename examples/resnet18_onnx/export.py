#!/usr/bin/python3
"""export.py: export a torchvision model (or a small TransformerEncoder) to ONNX,
with an input and torch's output on it, for `eulernpu import`.

For each model named on the command line (default: resnet18), writes into OUT/NAME/:
model.onnx (torch.onnx.export, opset 17), input.npz (key "x") and
expected.npz (key "y": torch's float32 output on that input).

Weights are random (weights=None: nothing is downloaded) from a fixed seed,
and re-initialised so that every layer's output is of order one, which a
tolerance check needs to be able to fail:
- BatchNorm: scale in [0.5, 1.5], bias and running mean around 0 (std 0.1),
  running variance in [0.5, 1.5] -- not the identity it starts as;
- then the last Linear layer is rescaled so the output's standard deviation
  is about 1 (torchvision's heads start tiny or at zero; depthwise nets'
  activations shrink layer by layer).

Usage: export.py OUT [NAME...]   (NAME: resnet18, mobilenet_v2, mobilenet_v3_small,
       squeezenet1_1, shufflenet_v2_x0_5, efficientnet_b0, transformer, all;
       make bench also exports resnet50 and densenet121)

tests/conformance/models.sh exports all seven with it.
"""
import os
import sys
import warnings

import numpy as np
import torch
import torchvision

warnings.filterwarnings("ignore")
torch.manual_seed(0)
torch.set_num_threads(1)


def transformer():
    layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                             dropout=0.0, batch_first=True)
    return torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)


MODELS = {
    "resnet18": (lambda: torchvision.models.resnet18(weights=None), (1, 3, 224, 224)),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), (1, 3, 224, 224)),
    "mobilenet_v3_small": (lambda: torchvision.models.mobilenet_v3_small(weights=None),
                           (1, 3, 224, 224)),
    "squeezenet1_1": (lambda: torchvision.models.squeezenet1_1(weights=None), (1, 3, 224, 224)),
    "shufflenet_v2_x0_5": (lambda: torchvision.models.shufflenet_v2_x0_5(weights=None),
                           (1, 3, 224, 224)),
    "efficientnet_b0": (lambda: torchvision.models.efficientnet_b0(weights=None),
                        (1, 3, 224, 224)),
    "transformer": (transformer, (1, 16, 64)),
    # make bench's larger families (tests/bench/bench.sh)
    "resnet50": (lambda: torchvision.models.resnet50(weights=None), (1, 3, 224, 224)),
    "densenet121": (lambda: torchvision.models.densenet121(weights=None), (1, 3, 224, 224)),
}


def reinit(model):
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, (torch.nn.BatchNorm2d, torch.nn.BatchNorm1d)):
            with torch.no_grad():
                m.weight.copy_(0.5 + torch.rand(m.weight.shape, generator=g))
                m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=g))
                m.running_mean.copy_(0.1 * torch.randn(m.running_mean.shape, generator=g))
                m.running_var.copy_(0.5 + torch.rand(m.running_var.shape, generator=g))


def rescale_head(model, x):
    """Scale the last Linear (or, without one, the last Conv) so std(y) ~ 1."""
    last = None
    for m in model.modules():
        if isinstance(m, torch.nn.Linear):
            last = m
    if last is None:
        for m in model.modules():
            if isinstance(m, torch.nn.Conv2d):
                last = m
    with torch.no_grad():
        y = model(x)
        s = float(y.std())
        if last is None or not np.isfinite(s) or s == 0.0 or 0.3 < s < 3.0:
            return
        last.weight.mul_(1.0 / s)
        if last.bias is not None:
            last.bias.mul_(1.0 / s)


def export(name, out):
    make, shape = MODELS[name]
    model = make().eval()
    reinit(model)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(2))
    rescale_head(model, x)
    with torch.no_grad():
        y = model(x)
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    torch.onnx.export(model, x, os.path.join(d, "model.onnx"), opset_version=17,
                      input_names=["x"], output_names=["y"], do_constant_folding=False)
    np.savez(os.path.join(d, "input.npz"), x=x.numpy().astype(np.float32))
    np.savez(os.path.join(d, "expected.npz"), y=y.numpy().astype(np.float32))
    yn = y.numpy()
    print("%s: output %s, std %.3g, max |y| %.3g" % (name, tuple(yn.shape), yn.std(),
                                                     abs(yn).max()))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    names = sys.argv[2:] or ["resnet18"]
    if names == ["all"]:
        names = [n for n in MODELS if n not in ("resnet50", "densenet121")]
    for n in names:
        if n not in MODELS:
            sys.exit("export.py: unknown model '%s' (known: %s)" % (n, ", ".join(MODELS)))
    for n in names:
        export(n, sys.argv[1])


if __name__ == "__main__":
    main()
