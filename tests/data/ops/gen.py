#!/usr/bin/python3
"""Generate the single-op cases that cross-check the cpu_ref kernels against
NumPy: one directory per case with spec.yaml, input.npz, weights.npz and
expected.npz (the op evaluated in float64 on the float32 inputs, then cast
to float32), plus cases.txt listing them. Deterministic: each case's data
comes from a generator seeded by the case name, and the .npz files carry a
fixed timestamp, so re-running reproduces the same bytes.

Run from anywhere: /usr/bin/python3 tests/data/ops/gen.py
"""
import io
import math
import os
import shutil
import zipfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# The comparing test uses atol 1e-5 + rtol 1e-5; every case must also pass
# when evaluated in float32 by NumPy, with this much margin to spare.
F32_CHECK_TOL = 5e-6

CASES = []


def savez(path, arrays):
    """np.savez's layout (zip64 .npy members, stored), fixed timestamps."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for key, arr in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.require(arr, requirements="C"), allow_pickle=False)
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            with z.open(info, "w", force_zip64=True) as f:
                f.write(buf.getvalue())


def yaml_scalar(v):
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, float):
        if math.isinf(v):
            return ".inf" if v > 0 else "-.inf"
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(yaml_scalar(x) for x in v) + "]"
    return str(v)


def tensor_decl(name, arr):
    shape = ", ".join(str(d) for d in arr.shape)
    return "  - {name: %s, dtype: float32, shape: [%s]}" % (name, shape)


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def emit(name, op, operands, attrs, expected64, f32=None, version=1):
    """operands: list of (tensor name, float32 array, is_weight) in op input
    order. expected64: the float64 result. f32: the same op evaluated in
    float32 by NumPy (a sanity check that float32 stays within tolerance)."""
    d = os.path.join(HERE, name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    ins = [(n, a) for n, a, w in operands if not w]
    ws = [(n, a) for n, a, w in operands if w]
    lines = ["eulernpu: %d" % version, "name: " + name, "inputs:"]
    lines += [tensor_decl(n, a) for n, a in ins]
    lines.append("outputs: [y]")
    if ws:
        lines.append("weights:")
        lines += [tensor_decl(n, a) for n, a in ws]
    else:
        lines.append("weights: []")
    op_line = "      - {name: op0, op: %s, in: [%s], out: y" % (
        op, ", ".join(n for n, _, _ in operands))
    if attrs:
        op_line += ", attrs: {%s}" % ", ".join(
            "%s: %s" % (k, yaml_scalar(v)) for k, v in attrs.items())
    op_line += "}"
    lines += ["components:", "  - name: main", "    ops:", op_line, ""]
    with open(os.path.join(d, "spec.yaml"), "w") as f:
        f.write("\n".join(lines))
    exp32 = np.asarray(expected64, dtype=np.float64).astype(np.float32)
    savez(os.path.join(d, "input.npz"), {n: a for n, a in ins})
    savez(os.path.join(d, "weights.npz"), {n: a for n, a in ws})
    savez(os.path.join(d, "expected.npz"), {"y": exp32})
    if f32 is not None:
        f32 = np.asarray(f32, dtype=np.float32)
        assert f32.shape == exp32.shape, (name, f32.shape, exp32.shape)
        ok = np.allclose(f32, exp32, atol=F32_CHECK_TOL, rtol=F32_CHECK_TOL, equal_nan=True)
        assert ok, "%s: float32 result strays from float64 by %g" % (
            name, float(np.max(np.abs(f32.astype(np.float64) - exp32))))
    size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
    assert size < 50 * 1024, "%s is %d bytes" % (name, size)
    CASES.append(name)


def randn(r, shape):
    return r.standard_normal(shape).astype(np.float32)


def f64(a):
    return a.astype(np.float64)


# ---- reference implementations (float64 or float32, NumPy) ------------

def conv2d_ref(x, w, b, strides, pads, dil, group):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    pt, pl, pb, pr = pads
    xp = np.zeros((n, c, h + pt + pb, wd + pl + pr), dtype=x.dtype)
    xp[:, :, pt:pt + h, pl:pl + wd] = x
    oh = (h + pt + pb - dil[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wd + pl + pr - dil[1] * (kw - 1) - 1) // strides[1] + 1
    y = np.zeros((n, m, oh, ow), dtype=x.dtype)
    mg = m // group
    for g in range(group):
        for i in range(kh):
            for j in range(kw):
                hs, ws = i * dil[0], j * dil[1]
                patch = xp[:, g * cg:(g + 1) * cg,
                           hs:hs + strides[0] * (oh - 1) + 1:strides[0],
                           ws:ws + strides[1] * (ow - 1) + 1:strides[1]]
                wg = w[g * mg:(g + 1) * mg, :, i, j]          # (mg, cg)
                y[:, g * mg:(g + 1) * mg] += np.einsum("nchw,mc->nmhw", patch, wg)
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


def pool_ref(x, kernel, strides, pads, mode, include_pad=0):
    n, c, h, w = x.shape
    pt, pl, pb, pr = pads
    oh = (h + pt + pb - kernel[0]) // strides[0] + 1
    ow = (w + pl + pr - kernel[1]) // strides[1] + 1
    fillv = -np.inf if mode == "max" else 0.0
    xp = np.full((n, c, h + pt + pb, w + pl + pr), fillv, dtype=x.dtype)
    xp[:, :, pt:pt + h, pl:pl + w] = x
    valid = np.zeros((h + pt + pb, w + pl + pr))
    valid[pt:pt + h, pl:pl + w] = 1
    y = np.zeros((n, c, oh, ow), dtype=x.dtype)
    for i in range(oh):
        for j in range(ow):
            hs, ws = i * strides[0], j * strides[1]
            win = xp[:, :, hs:hs + kernel[0], ws:ws + kernel[1]]
            if mode == "max":
                y[:, :, i, j] = win.max(axis=(2, 3))
            else:
                cnt = kernel[0] * kernel[1] if include_pad else \
                    valid[hs:hs + kernel[0], ws:ws + kernel[1]].sum()
                y[:, :, i, j] = win.sum(axis=(2, 3)) / cnt
    return y


def softmax_ref(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


_erf = np.vectorize(math.erf)


def gelu_ref(x, approximate):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def gemm_ref(a, b, c, alpha, beta, ta, tb):
    aa = a.T if ta else a
    bb = b.T if tb else b
    y = alpha * (aa @ bb)
    if c is not None:
        y = y + beta * c
    return y


# ---- the cases -----------------------------------------------------------

def both(fn, *arrays):
    """fn in float64 and in float32 on the same float32 arrays."""
    return fn(*[None if a is None else f64(a) for a in arrays]), fn(*arrays)


def matmul_cases():
    shapes = [
        ("matmul_2d", (4, 8), (8, 5), False),
        ("matmul_2d_weight", (3, 16), (16, 7), True),
        ("matmul_k64", (5, 64), (64, 33), True),
        ("matmul_1d_left", (6,), (6, 4), False),
        ("matmul_1d_right", (3, 6), (6,), True),
        ("matmul_1d_both", (9,), (9,), False),
        ("matmul_batched", (2, 3, 4, 5), (2, 3, 5, 6), False),
        ("matmul_batch_bcast", (2, 1, 3, 4), (5, 4, 2), False),
        ("matmul_batch_rank_mismatch", (3, 4, 5), (5, 7), True),
        ("matmul_batch_1d_right", (2, 3, 4), (4,), False),
        ("matmul_wide", (1, 24), (24, 40), True),
    ]
    for name, sa, sb, weight in shapes:
        r = rng_for(name)
        a, b = randn(r, sa), randn(r, sb)
        e64, e32 = both(np.matmul, a, b)
        emit(name, "matmul", [("x", a, False), ("w" if weight else "x2", b, weight)],
             {}, e64, e32)


def gemm_cases():
    cfg = [
        ("gemm_plain", 4, 6, 5, {}, None, False),
        ("gemm_trans_a", 5, 3, 7, {"trans_a": 1}, None, True),
        ("gemm_trans_b", 3, 8, 6, {"trans_b": 1}, (8,), True),
        ("gemm_trans_ab", 6, 4, 9, {"trans_a": 1, "trans_b": 1}, (6, 4), False),
        ("gemm_alpha_beta", 4, 5, 6, {"alpha": 0.5, "beta": -1.25}, (1, 5), True),
        ("gemm_c_col", 4, 5, 3, {"alpha": 2.0}, (4, 1), False),
        ("gemm_c_scalar", 3, 3, 4, {"beta": 0.75}, (), True),
        ("gemm_c_one", 2, 7, 5, {}, (1,), False),
        ("gemm_k64", 6, 10, 64, {"trans_b": 1}, (10,), True),
    ]
    for name, m, n, k, attrs, cshape, weight in cfg:
        r = rng_for(name)
        ta, tb = attrs.get("trans_a", 0), attrs.get("trans_b", 0)
        a = randn(r, (k, m) if ta else (m, k))
        b = randn(r, (n, k) if tb else (k, n))
        c = randn(r, cshape) if cshape is not None else None
        alpha, beta = attrs.get("alpha", 1.0), attrs.get("beta", 1.0)
        e64, e32 = both(lambda A, B, C: gemm_ref(A, B, C, alpha, beta, ta, tb), a, b, c)
        ops = [("x", a, False), ("w" if weight else "x2", b, weight)]
        if c is not None:
            ops.append(("c", c, weight))
        emit(name, "gemm", ops, attrs, e64, e32)


def binary_cases():
    cfg = [
        ("add_same", "add", (3, 4), (3, 4)),
        ("add_scalar_like", "add", (2, 3, 4), (1,)),
        ("add_rank0", "add", (5, 2), ()),
        ("add_rank_mismatch", "add", (2, 3, 4), (4,)),
        ("sub_size1_dims", "sub", (3, 1, 5), (1, 4, 1)),
        ("sub_left_bcast", "sub", (4,), (3, 2, 4)),
        ("mul_bias_like", "mul", (2, 6, 3, 3), (6, 1, 1)),
        ("mul_same", "mul", (7,), (7,)),
        ("div_same", "div", (4, 5), (4, 5)),
        ("div_bcast", "div", (2, 1, 3), (4, 1)),
    ]
    fns = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}
    for name, op, sa, sb in cfg:
        r = rng_for(name)
        a = randn(r, sa)
        if op == "div":   # keep denominators away from 0
            b = (r.choice([-1.0, 1.0], size=sb) * r.uniform(0.5, 2.0, size=sb)).astype(np.float32)
        else:
            b = randn(r, sb)
        e64, e32 = both(fns[op], a, b)
        emit(name, op, [("x", a, False), ("x2", b, False)], {}, e64, e32)


def unary_cases():
    def sig(x):
        return 1 / (1 + np.exp(-x))
    cfg = [
        ("relu", "relu", {}, lambda x: np.maximum(x, 0)),
        ("sigmoid", "sigmoid", {}, sig),
        ("tanh", "tanh", {}, np.tanh),
        ("leaky_relu_default", "leaky_relu", {}, lambda x: np.where(x >= 0, x, 0.01 * x)),
        ("leaky_relu_alpha", "leaky_relu", {"alpha": 0.2}, lambda x: np.where(x >= 0, x, 0.2 * x)),
        ("clip_both", "clip", {"min": -0.5, "max": 0.75}, lambda x: np.minimum(np.maximum(x, -0.5), 0.75)),
        ("clip_min_only", "clip", {"min": 0.0}, lambda x: np.maximum(x, 0.0)),
        ("clip_max_only", "clip", {"max": 1.0}, lambda x: np.minimum(x, 1.0)),
        ("gelu_none", "gelu", {}, lambda x: gelu_ref(x, "none")),
        ("gelu_none_explicit", "gelu", {"approximate": "none"}, lambda x: gelu_ref(x, "none")),
        ("gelu_tanh", "gelu", {"approximate": "tanh"}, lambda x: gelu_ref(x, "tanh")),
    ]
    for name, op, attrs, fn in cfg:
        r = rng_for(name)
        x = (randn(r, (3, 4, 5)) * 2.5).astype(np.float32)
        e64, e32 = both(fn, x)
        emit(name, op, [("x", x, False)], attrs, e64, e32)


def v2_unary_cases():
    """spec v2 unary ops (eulernpu: 2). Inputs include the special values
    (±0, ±Inf, NaN; negatives for sqrt) next to random ones."""
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5], dtype=np.float32)
    cfg = [
        ("exp", "exp", 1.0, np.exp),
        ("log", "log", 2.5, np.log),
        ("sqrt", "sqrt", 2.5, np.sqrt),
        ("neg", "neg", 2.5, np.negative),
        ("abs", "abs", 2.5, np.abs),
        ("reciprocal", "reciprocal", 2.5, np.reciprocal),
        ("erf", "erf", 1.5, np.vectorize(math.erf, otypes=[np.float64])),
    ]
    for name, op, scale, fn in cfg:
        r = rng_for(name)
        x = (randn(r, (3, 4, 5)) * scale).astype(np.float32)
        if op == "log":   # mostly positive: |x|, then a few negatives
            x = np.abs(x)
            x[0, 0, 3:6] = -x[0, 0, 3:6]
        if op == "reciprocal":
            x[np.abs(x) < 0.05] = 0.25   # keep 1/x within the tolerance's scale
        flat = x.reshape(-1)
        flat[:len(special)] = special
        if op == "erf":
            e64 = np.where(np.isnan(x), np.nan, fn(np.nan_to_num(f64(x), nan=0.0)))
            e32 = e64
        else:
            with np.errstate(all="ignore"):
                e64, e32 = both(fn, x)
        emit("v2_" + name, op, [("x", x, False)], {}, e64, e32, version=2)


def softmax_cases():
    cfg = [
        ("softmax_default", (4, 10), None),
        ("softmax_axis0", (6, 3), 0),
        ("softmax_axis_mid", (2, 5, 3), 1),
        ("softmax_axis_neg2", (2, 5, 3), -2),
        ("softmax_axis_last", (3, 2, 7), 2),
        ("softmax_1d", (12,), -1),
    ]
    for name, shape, axis in cfg:
        r = rng_for(name)
        x = (randn(r, shape) * 3).astype(np.float32)
        ax = -1 if axis is None else axis
        e64, e32 = both(lambda v: softmax_ref(v, ax), x)
        emit(name, "softmax", [("x", x, False)], {} if axis is None else {"axis": axis}, e64, e32)


def conv_cases():
    # name, x shape, (M, kh, kw), strides, pads, dilations, group, bias, weight?
    cfg = [
        ("conv_basic", (1, 3, 8, 8), (4, 3, 3), [1, 1], [0, 0, 0, 0], [1, 1], 1, True, True),
        ("conv_nobias_input_w", (1, 2, 6, 6), (3, 3, 3), [1, 1], [0, 0, 0, 0], [1, 1], 1, False, False),
        ("conv_pad_same", (2, 3, 7, 7), (4, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1], 1, True, True),
        ("conv_stride2", (1, 4, 9, 9), (5, 3, 3), [2, 2], [1, 1, 1, 1], [1, 1], 1, True, True),
        ("conv_asym_pad_stride", (1, 2, 8, 7), (3, 3, 2), [2, 1], [2, 0, 1, 1], [1, 1], 1, True, True),
        ("conv_dilation", (1, 3, 10, 10), (2, 3, 3), [1, 1], [2, 2, 2, 2], [2, 2], 1, True, True),
        ("conv_dilation_asym", (1, 2, 9, 11), (3, 2, 3), [1, 2], [0, 1, 0, 1], [3, 2], 1, False, True),
        ("conv_groups2", (1, 4, 6, 6), (6, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1], 2, True, True),
        ("conv_depthwise", (2, 6, 7, 7), (6, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1], 6, True, True),
        ("conv_depthwise_mult2", (1, 3, 6, 6), (6, 3, 3), [2, 2], [1, 1, 0, 0], [1, 1], 3, True, True),
        ("conv_pointwise", (2, 8, 4, 4), (5, 1, 1), [1, 1], [0, 0, 0, 0], [1, 1], 1, True, True),
        ("conv_k5_pad2", (1, 2, 8, 8), (3, 5, 5), [1, 1], [2, 2, 2, 2], [1, 1], 1, True, True),
        ("conv_1x1_out", (1, 4, 3, 3), (2, 3, 3), [1, 1], [0, 0, 0, 0], [1, 1], 1, True, False),
    ]
    for name, xs, (m, kh, kw), st, pads, dil, group, bias, weight in cfg:
        r = rng_for(name)
        x = randn(r, xs)
        w = randn(r, (m, xs[1] // group, kh, kw))
        b = randn(r, (m,)) if bias else None
        e64, e32 = both(lambda X, W, B: conv2d_ref(X, W, B, st, pads, dil, group), x, w, b)
        attrs = {}
        if st != [1, 1]:
            attrs["strides"] = st
        if pads != [0, 0, 0, 0]:
            attrs["pads"] = pads
        if dil != [1, 1]:
            attrs["dilations"] = dil
        if group != 1:
            attrs["group"] = group
        ops = [("x", x, False), ("w", w, weight)]
        if b is not None:
            ops.append(("b", b, weight))
        emit(name, "conv2d", ops, attrs, e64, e32)


def pool_cases():
    cfg = [
        ("maxpool_2x2", "maxpool2d", (1, 3, 8, 8), [2, 2], None, [0, 0, 0, 0], 0),
        ("maxpool_3x3_s2_pad", "maxpool2d", (2, 2, 9, 9), [3, 3], [2, 2], [1, 1, 1, 1], 0),
        ("maxpool_asym", "maxpool2d", (1, 2, 7, 6), [3, 2], [1, 2], [1, 0, 1, 1], 0),
        ("avgpool_2x2", "avgpool2d", (1, 3, 8, 8), [2, 2], None, [0, 0, 0, 0], 0),
        ("avgpool_pad_exclude", "avgpool2d", (1, 2, 7, 7), [3, 3], [2, 2], [1, 1, 1, 1], 0),
        ("avgpool_pad_include", "avgpool2d", (1, 2, 7, 7), [3, 3], [2, 2], [1, 1, 1, 1], 1),
        ("avgpool_asym_stride1", "avgpool2d", (2, 1, 6, 5), [2, 3], [1, 1], [0, 1, 1, 1], 0),
    ]
    for name, op, xs, kern, st, pads, incl in cfg:
        r = rng_for(name)
        x = randn(r, xs)
        mode = "max" if op == "maxpool2d" else "avg"
        stv = st if st is not None else kern
        e64, e32 = both(lambda X: pool_ref(X, kern, stv, pads, mode, incl), x)
        attrs = {"kernel": kern}
        if st is not None:
            attrs["strides"] = st
        if pads != [0, 0, 0, 0]:
            attrs["pads"] = pads
        if incl:
            attrs["count_include_pad"] = 1
        emit(name, op, [("x", x, False)], attrs, e64, e32)
    for name, xs in [("global_avgpool", (2, 3, 5, 4)), ("global_avgpool_1x1", (1, 4, 1, 1))]:
        r = rng_for(name)
        x = randn(r, xs)
        e64, e32 = both(lambda X: X.mean(axis=(2, 3), keepdims=True), x)
        emit(name, "global_avgpool", [("x", x, False)], {}, e64, e32)


def batchnorm_cases():
    for name, xs, eps in [("batchnorm", (2, 3, 4, 4), None), ("batchnorm_eps", (1, 5, 3, 2), 1e-3),
                          ("batchnorm_2d", (4, 6), None)]:
        r = rng_for(name)
        x = randn(r, xs)
        c = xs[1]
        scale, bias, mean = randn(r, (c,)), randn(r, (c,)), randn(r, (c,))
        var = r.uniform(0.5, 2.0, size=(c,)).astype(np.float32)
        e = 1e-5 if eps is None else eps
        bshape = (1, c) + (1,) * (len(xs) - 2)

        def bn(X, S, B, M, V):
            rs = lambda t: t.reshape(bshape)
            return (X - rs(M)) / np.sqrt(rs(V) + X.dtype.type(e)) * rs(S) + rs(B)
        e64, e32 = both(bn, x, scale, bias, mean, var)
        emit(name, "batchnorm",
             [("x", x, False), ("scale", scale, True), ("bias", bias, True),
              ("mean", mean, True), ("var", var, True)],
             {} if eps is None else {"epsilon": eps}, e64, e32)


def movement_cases():
    r = rng_for("reshape")
    x = randn(r, (2, 3, 4))
    emit("reshape", "reshape", [("x", x, False)], {"shape": [4, 6]}, f64(x).reshape(4, 6), x.reshape(4, 6))
    r = rng_for("reshape_zero_neg1")
    x = randn(r, (2, 3, 4))   # [0, -1] keeps dim 0 (2), infers 12
    emit("reshape_zero_neg1", "reshape", [("x", x, False)], {"shape": [0, -1]},
         f64(x).reshape(2, 12), x.reshape(2, 12))
    r = rng_for("reshape_neg1_first")
    x = randn(r, (6, 4))
    emit("reshape_neg1_first", "reshape", [("x", x, False)], {"shape": [-1, 2, 3]},
         f64(x).reshape(-1, 2, 3), x.reshape(-1, 2, 3))
    for name, xs, axis in [("flatten_default", (2, 3, 4, 5), None), ("flatten_axis0", (3, 4), 0),
                           ("flatten_axis2", (2, 3, 4, 5), 2), ("flatten_axis_neg1", (2, 3, 4), -1)]:
        r = rng_for(name)
        x = randn(r, xs)
        ax = 1 if axis is None else (axis if axis >= 0 else axis + len(xs))
        tgt = (int(np.prod(xs[:ax])), int(np.prod(xs[ax:])))
        emit(name, "flatten", [("x", x, False)], {} if axis is None else {"axis": axis},
             f64(x).reshape(tgt), x.reshape(tgt))
    for name, xs, perm in [("transpose_default", (2, 3, 4), None), ("transpose_perm", (2, 3, 4, 5), [0, 2, 3, 1]),
                           ("transpose_2d", (5, 7), [1, 0])]:
        r = rng_for(name)
        x = randn(r, xs)
        emit(name, "transpose", [("x", x, False)], {} if perm is None else {"perm": perm},
             np.transpose(f64(x), perm), np.transpose(x, perm))
    for name, shapes, axis, weight in [("concat_axis1", [(2, 3, 4), (2, 1, 4), (2, 2, 4)], 1, False),
                                       ("concat_axis_neg1", [(3, 2), (3, 5)], -1, False),
                                       ("concat_axis0_weight", [(2, 4), (3, 4)], 0, True),
                                       ("concat_single", [(2, 2)], 0, False)]:
        r = rng_for(name)
        xs = [randn(r, s) for s in shapes]
        ops = [("x%d" % i, a, weight and i == len(xs) - 1) for i, a in enumerate(xs)]
        emit(name, "concat", ops, {"axis": axis},
             np.concatenate([f64(a) for a in xs], axis=axis), np.concatenate(xs, axis=axis))


def main():
    for d in os.listdir(HERE):   # drop stale case directories
        p = os.path.join(HERE, d)
        if os.path.isdir(p) and os.path.exists(os.path.join(p, "spec.yaml")):
            shutil.rmtree(p)
    matmul_cases()
    gemm_cases()
    binary_cases()
    unary_cases()
    v2_unary_cases()
    softmax_cases()
    conv_cases()
    pool_cases()
    batchnorm_cases()
    movement_cases()
    with open(os.path.join(HERE, "cases.txt"), "w") as f:
        f.write("".join(c + "\n" for c in CASES))
    print("%d cases" % len(CASES))


if __name__ == "__main__":
    main()
