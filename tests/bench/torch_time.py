#!/usr/bin/python3
"""torch_time.py: PyTorch's side of `make bench`'s model rows.

Usage: torch_time.py REPS NAME...   (names of examples/resnet18_onnx/export.py)

Builds each model as export.py does (the same random weights and input),
runs it REPS times at one thread under torch.no_grad() after two warm-up
runs, and prints "NAME median MS" per model. tests/bench/bench.sh calls it
between rounds of our own runs, so that both see the same machine load.
"""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                                "resnet18_onnx"))
import export  # noqa: E402

torch.set_num_threads(1)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    reps = int(sys.argv[1])
    for name in sys.argv[2:]:
        make, shape = export.MODELS[name]
        model = make().eval()
        export.reinit(model)
        x = torch.randn(shape, generator=torch.Generator().manual_seed(2))
        with torch.no_grad():
            model(x)
            model(x)
            ts = []
            for _ in range(reps):
                t = time.perf_counter()
                model(x)
                ts.append(time.perf_counter() - t)
        ts.sort()
        print("%s median %.3f" % (name, 1e3 * ts[len(ts) // 2]))


if __name__ == "__main__":
    main()
