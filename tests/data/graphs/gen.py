#!/usr/bin/python3
# gen.py: random multi-op graphs for test_npu_exact (npu_sim against
# cpu_ref, byte for byte). Seeded: running it again writes the same files.
#
#   /usr/bin/python3 tests/data/graphs/gen.py        (from the repository root)
#
# Each graph is a chain with diamonds (two branches joined by add/mul/concat)
# mixing matmul, gemm, conv2d, elementwise ops, activations, pools, softmax,
# batchnorm and reshape/flatten/transpose/concat, written as
# tests/data/graphs/<name>/{spec.yaml, weights.npz, input.npz}, plus
# cases.txt. Shapes are chosen so that M, N and K fold raggedly on small
# arrays. No expected outputs: the test compares the two backends.
import os
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
N_GRAPHS = 20


class G:
    """A graph under construction: tensors with shapes, weights, ops."""

    def __init__(self, name, rng):
        self.name, self.rng = name, rng
        self.inputs, self.weights, self.ops = [], [], []
        self.shapes, self.wdata, self.idata = {}, {}, {}
        self.n = 0

    def fresh(self, base):
        self.n += 1
        return "%s%d" % (base, self.n)

    def input(self, shape):
        t = "x%d" % len(self.inputs)
        self.inputs.append(t)
        self.shapes[t] = list(shape)
        self.idata[t] = self.rng.standard_normal(shape).astype(np.float32)
        return t

    def weight(self, shape, scale=None, positive=False):
        t = self.fresh("w")
        fan = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        s = scale if scale is not None else 1.0 / np.sqrt(max(fan, 1))
        v = self.rng.standard_normal(shape) * s
        if positive:
            v = np.abs(v) + 0.5
        self.weights.append(t)
        self.shapes[t] = list(shape)
        self.wdata[t] = v.astype(np.float32)
        return t

    def op(self, kind, ins, shape, attrs=None):
        out = self.fresh("t")
        self.ops.append((self.fresh("op_%s_" % kind), kind, ins, out, attrs or {}))
        self.shapes[out] = list(shape)
        return out

    # ---- ops with their shape rules (SPEC_FORMAT.md / ONNX) ----

    def act(self, x):
        r = self.rng
        kind = r.choice(["relu", "sigmoid", "tanh", "leaky_relu", "clip", "gelu"])
        attrs = {}
        if kind == "leaky_relu":
            attrs = {"alpha": round(float(r.uniform(0.01, 0.3)), 3)}
        elif kind == "clip":
            attrs = {"min": -1.5, "max": 1.25}
        elif kind == "gelu":
            attrs = {"approximate": str(r.choice(["none", "tanh"]))}
        return self.op(kind, [x], self.shapes[x], attrs)

    def conv(self, x):
        r = self.rng
        B, C, H, W = self.shapes[x]
        k = int(r.choice([1, 2, 3]))
        dil = int(r.choice([1, 1, 2])) if k > 1 and min(H, W) >= 5 else 1
        st = int(r.choice([1, 1, 2]))
        p = int(r.integers(0, k)) if k > 1 else 0
        pads = [p, int(r.integers(0, p + 1)), p, int(r.integers(0, p + 1))]
        groups = [g for g in (1, 2, 3) if C % g == 0]
        g = int(r.choice(groups))
        M = g * int(r.integers(1, 5))
        ek = dil * (k - 1) + 1
        OH = (H + pads[0] + pads[2] - ek) // st + 1
        OW = (W + pads[1] + pads[3] - ek) // st + 1
        if OH < 1 or OW < 1:
            return x
        w = self.weight([M, C // g, k, k])
        ins = [x, w]
        if r.random() < 0.7:
            ins.append(self.weight([M], scale=0.1))
        attrs = {"strides": [st, st], "pads": pads, "dilations": [dil, dil], "group": g}
        return self.op("conv2d", ins, [B, M, OH, OW], attrs)

    def pool(self, x):
        r = self.rng
        B, C, H, W = self.shapes[x]
        kind = r.choice(["maxpool2d", "avgpool2d", "global_avgpool"])
        if kind == "global_avgpool" or min(H, W) < 3:
            return self.op("global_avgpool", [x], [B, C, 1, 1])
        k = int(r.choice([2, 3]))
        st = int(r.choice([1, 2]))
        p = int(r.integers(0, 2)) if k == 3 else 0
        attrs = {"kernel": [k, k], "strides": [st, st], "pads": [p, p, p, p]}
        if kind == "avgpool2d":
            attrs["count_include_pad"] = int(r.integers(0, 2))
        OH = (H + 2 * p - k) // st + 1
        OW = (W + 2 * p - k) // st + 1
        return self.op(kind, [x], [B, C, OH, OW], attrs)

    def bn(self, x):
        C = self.shapes[x][1]
        ins = [x, self.weight([C], 1.0), self.weight([C], 0.1), self.weight([C], 0.1),
               self.weight([C], 0.2, positive=True)]
        return self.op("batchnorm", ins, self.shapes[x], {"epsilon": 1e-5})

    def matmul(self, x):
        r = self.rng
        sh = self.shapes[x]
        N = int(r.integers(1, 24))
        w = self.weight([sh[-1], N])
        return self.op("matmul", [x, w], sh[:-1] + [N])

    def gemm(self, x):
        r = self.rng
        M, K = self.shapes[x]
        N = int(r.integers(1, 24))
        tb = int(r.integers(0, 2))
        ta = int(r.integers(0, 2))
        a = x
        if ta:
            a = self.op("transpose", [x], [K, M], {"perm": [1, 0]})
        w = self.weight([N, K] if tb else [K, N])
        ins = [a, w]
        cshape = [[N], [1, N], [M, N]][int(r.integers(0, 3))]
        if r.random() < 0.8:
            ins.append(self.weight(cshape, 0.1))
        attrs = {"alpha": round(float(r.uniform(0.5, 1.5)), 3),
                 "beta": round(float(r.uniform(0.5, 1.5)), 3), "trans_a": ta, "trans_b": tb}
        return self.op("gemm", ins, [M, N], attrs)

    def elementwise(self, x, y=None):
        r = self.rng
        kind = str(r.choice(["add", "sub", "mul", "div"]))
        if y is None:
            # a broadcast operand: a weight over the last dim, or a scalar-like
            sh = self.shapes[x]
            wshape = [sh[-1]] if r.random() < 0.6 else [1] * len(sh)
            y = self.weight(wshape, 0.5, positive=(kind == "div"))
        elif kind == "div":
            kind = "add"   # an activation as divisor could be ~0
        return self.op(kind, [x, y], self.shapes[x])

    def softmax(self, x):
        nd = len(self.shapes[x])
        axis = int(self.rng.choice([-1, nd - 1, 1 if nd > 1 else 0]))
        return self.op("softmax", [x], self.shapes[x], {"axis": axis})


def cnn(g):
    r = g.rng
    x = g.input([int(r.integers(1, 3)), int(r.choice([1, 2, 3, 4])), int(r.integers(6, 13)),
                 int(r.integers(6, 13))])
    x = g.conv(x)
    for _ in range(int(r.integers(1, 4))):
        step = r.choice(["conv", "act", "pool", "bn", "diamond", "concat"])
        B, C, H, W = g.shapes[x]
        if step == "conv":
            x = g.conv(x)
        elif step == "act":
            x = g.act(x)
        elif step == "pool" and min(H, W) >= 3:
            x = g.pool(x)
        elif step == "bn":
            x = g.bn(x)
        elif step == "diamond":
            # two same-shaped branches: 1x1 conv and an activation, joined
            w = g.weight([C, C, 1, 1])
            a = g.op("conv2d", [x, w], [B, C, H, W], {"group": 1})
            b = g.act(x)
            x = g.elementwise(a, b)
        elif step == "concat":
            a = g.act(x)
            w = g.weight([2, C, 1, 1])
            b = g.op("conv2d", [x, w], [B, 2, H, W])
            x = g.op("concat", [a, b], [B, C + 2, H, W], {"axis": 1})
    x = g.act(x)
    B, C, H, W = g.shapes[x]
    if r.random() < 0.5:
        x = g.op("global_avgpool", [x], [B, C, 1, 1])
        C, H, W = C, 1, 1
    x = g.op("flatten", [x], [B, C * H * W], {"axis": 1})
    x = g.gemm(x) if r.random() < 0.5 else g.matmul(x)
    if r.random() < 0.5:
        x = g.elementwise(x)
    return g.softmax(x)


def mlp(g):
    r = g.rng
    B = int(r.integers(1, 6))
    x = g.input([B, int(r.integers(3, 40))])
    for _ in range(int(r.integers(2, 6))):
        step = r.choice(["matmul", "gemm", "act", "ew", "diamond", "concat", "batched"])
        if step == "matmul":
            x = g.matmul(x)
        elif step == "gemm":
            x = g.gemm(x)
        elif step == "act":
            x = g.act(x)
        elif step == "ew":
            x = g.elementwise(x)
        elif step == "diamond":
            a = g.matmul(x)
            w = g.weight([g.shapes[x][1], g.shapes[a][1]])
            b = g.act(g.op("matmul", [x, w], g.shapes[a]))
            x = g.elementwise(a, b)
        elif step == "concat":
            a = g.act(x)
            b = g.matmul(x)
            x = g.op("concat", [a, b], [B, g.shapes[a][1] + g.shapes[b][1]], {"axis": 1})
        elif step == "batched":
            # (B, F) -> (B, 1, F) reshape, a 3-D weight batch, and back
            F = g.shapes[x][1]
            y = g.op("reshape", [x], [B, 1, F], {"shape": [0, 1, -1]})
            N = int(r.integers(2, 9))
            wb = B if r.random() < 0.5 else 1
            w = g.weight([wb, F, N])
            z = g.op("matmul", [y, w], [B, 1, N])
            z = g.op("transpose", [z], [1, B, N], {"perm": [1, 0, 2]})
            x = g.op("reshape", [z], [B, N], {"shape": [B, N]})
    x = g.act(x)
    return g.softmax(x)


def fmt(v):
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return "[" + ", ".join(fmt(e) for e in v) + "]"
    if isinstance(v, float):
        return repr(v)
    return str(int(v))


def write(g, out):
    d = os.path.join(HERE, g.name)
    os.makedirs(d, exist_ok=True)
    L = ["# generated by tests/data/graphs/gen.py; do not edit", "eulernpu: 1",
         "name: %s" % g.name, "inputs:"]
    for t in g.inputs:
        L.append("  - {name: %s, dtype: float32, shape: %s}" % (t, fmt(g.shapes[t])))
    L.append("outputs: [%s]" % out)
    L.append("weights:")
    for t in g.weights:
        L.append("  - {name: %s, dtype: float32, shape: %s}" % (t, fmt(g.shapes[t])))
    L.append("components:")
    half = max(1, len(g.ops) // 2)
    for ci, ops in enumerate([g.ops[:half], g.ops[half:]]):
        if not ops:
            continue
        L.append("  - name: part%d" % ci)
        L.append("    ops:")
        for name, kind, ins, o, attrs in ops:
            a = ""
            if attrs:
                a = ", attrs: {" + ", ".join("%s: %s" % (k, fmt(v)) for k, v in attrs.items()) + "}"
            L.append("      - {name: %s, op: %s, in: [%s], out: %s%s}" %
                     (name, kind, ", ".join(ins), o, a))
    L.append("targets:")
    L.append("  npu_sim: {array: [4, 3], dataflow: ws}")
    with open(os.path.join(d, "spec.yaml"), "w") as f:
        f.write("\n".join(L) + "\n")
    np.savez(os.path.join(d, "weights.npz"), **{k: g.wdata[k] for k in g.weights})
    np.savez(os.path.join(d, "input.npz"), **{k: g.idata[k] for k in g.inputs})


def main():
    names = []
    for i in range(N_GRAPHS):
        rng = np.random.default_rng(1000 + i)
        name = "g%02d_%s" % (i, "cnn" if i % 2 == 0 else "mlp")
        g = G(name, rng)
        out = cnn(g) if i % 2 == 0 else mlp(g)
        write(g, out)
        names.append(name)
    with open(os.path.join(HERE, "cases.txt"), "w") as f:
        f.write("# random graphs from gen.py: test_npu_exact runs each on cpu_ref and npu_sim\n")
        f.write("\n".join(names) + "\n")


if __name__ == "__main__":
    main()
