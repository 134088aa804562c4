#!/usr/bin/python3
"""Regenerate tiny_cnn's weights.npz and input.npz (seeded), or, with
--check FILE, check a result file against a NumPy float64 forward pass.
Run with Debian's /usr/bin/python3. golden.npz comes from cpu_ref
(examples/regen.sh)."""
import os, sys
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

def load(name):
    with np.load(os.path.join(HERE, name)) as z:
        return {k: z[k].astype(np.float64) for k in z.files}

def conv2d(x, w, b, pad):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    y = np.zeros((n, m, oh, ow))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,mc->nmhw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return y + b[None, :, None, None]

def forward(p, x):
    c1 = conv2d(x["image"], p["conv1.w"], p["conv1.b"], 1)
    ch = lambda v: v[None, :, None, None]
    b1 = (c1 - ch(p["bn1.mean"])) / np.sqrt(ch(p["bn1.var"]) + 1e-5) * ch(p["bn1.scale"]) + ch(p["bn1.bias"])
    r1 = np.maximum(b1, 0.0)
    n, c, h, w = r1.shape
    p1 = r1.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))
    f = p1.mean(axis=(2, 3))
    logits = f @ p["fc.w"].T + p["fc.b"]
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return {"probs": e / e.sum(axis=-1, keepdims=True)}

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
    rng = np.random.default_rng(7)
    w = {
        "conv1.w": rng.standard_normal((8, 3, 3, 3)) / np.sqrt(27),
        "conv1.b": rng.standard_normal(8) * 0.1,
        "bn1.scale": 1.0 + 0.1 * rng.standard_normal(8),
        "bn1.bias": 0.1 * rng.standard_normal(8),
        "bn1.mean": 0.1 * rng.standard_normal(8),
        "bn1.var": 1.0 + 0.2 * rng.random(8),
        "fc.w": rng.standard_normal((10, 8)) / np.sqrt(8),
        "fc.b": rng.standard_normal(10) * 0.1,
    }
    np.savez(os.path.join(HERE, "weights.npz"), **{k: v.astype("<f4") for k, v in w.items()})
    np.savez(os.path.join(HERE, "input.npz"), image=rng.standard_normal((1, 3, 16, 16)).astype("<f4"))
    return 0

if __name__ == "__main__":
    sys.exit(main())
