#!/usr/bin/python3
"""Regenerate tiny_mlp's weights.npz and input.npz (seeded), or, with
--check FILE, check a result file against a NumPy float64 forward pass.
Run with Debian's /usr/bin/python3 (it has numpy). golden.npz itself comes
from cpu_ref: see examples/regen.sh."""
import os, sys
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

def load(name):
    with np.load(os.path.join(HERE, name)) as z:
        return {k: z[k] for k in z.files}

def forward(w, x):
    d = {k: v.astype(np.float64) for k, v in {**w, **x}.items()}
    h = np.maximum(d["x"] @ d["fc1.w"] + d["fc1.b"], 0.0)
    return {"logits": h @ d["fc2.w"] + d["fc2.b"]}

def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        want = forward(load("weights.npz"), load("input.npz"))
        with np.load(sys.argv[2]) as got:
            for k, v in want.items():
                diff = float(np.max(np.abs(got[k].astype(np.float64) - v)))
                print(f"{k}: max abs diff vs float64 {diff:.3g}")
                if not diff <= 1e-5:
                    return 1
        return 0
    rng = np.random.default_rng(2026)
    w = {
        "fc1.w": rng.standard_normal((8, 16)) / np.sqrt(8),
        "fc1.b": rng.standard_normal(16) * 0.1,
        "fc2.w": rng.standard_normal((16, 4)) / np.sqrt(16),
        "fc2.b": rng.standard_normal(4) * 0.1,
    }
    np.savez(os.path.join(HERE, "weights.npz"), **{k: v.astype("<f4") for k, v in w.items()})
    np.savez(os.path.join(HERE, "input.npz"), x=rng.standard_normal((1, 8)).astype("<f4"))
    return 0

if __name__ == "__main__":
    sys.exit(main())
