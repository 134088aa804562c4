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
import itertools
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
    dtype = "int64" if arr.dtype == np.int64 else "float32"
    return "  - {name: %s, dtype: %s, shape: [%s]}" % (name, dtype, shape)


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def emit(name, op, operands, attrs, expected64, f32=None, version=1, outs=None):
    """operands: list of (tensor name, float32 array, is_weight) in op input
    order. expected64: the float64 result. f32: the same op evaluated in
    float32 by NumPy (a sanity check that float32 stays within tolerance).
    outs: the output names of an op with several (split); expected64 and
    f32 are then lists, one result per output."""
    if outs is None:
        outs, expected64, f32 = ["y"], [expected64], None if f32 is None else [f32]
    d = os.path.join(HERE, name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    ins = [(n, a) for n, a, w in operands if not w]
    ws = [(n, a) for n, a, w in operands if w]
    lines = ["eulernpu: %d" % version, "name: " + name, "inputs:"]
    lines += [tensor_decl(n, a) for n, a in ins]
    lines.append("outputs: [%s]" % ", ".join(outs))
    if ws:
        lines.append("weights:")
        lines += [tensor_decl(n, a) for n, a in ws]
    else:
        lines.append("weights: []")
    op_line = "      - {name: op0, op: %s, in: [%s], out: %s" % (
        op, ", ".join(n for n, _, _ in operands),
        outs[0] if outs == ["y"] else "[" + ", ".join(outs) + "]")
    if attrs:
        op_line += ", attrs: {%s}" % ", ".join(
            "%s: %s" % (k, yaml_scalar(v)) for k, v in attrs.items())
    op_line += "}"
    lines += ["components:", "  - name: main", "    ops:", op_line, ""]
    with open(os.path.join(d, "spec.yaml"), "w") as f:
        f.write("\n".join(lines))
    exp32 = [np.asarray(e, dtype=np.float64).astype(np.float32) for e in expected64]
    savez(os.path.join(d, "input.npz"), {n: a for n, a in ins})
    savez(os.path.join(d, "weights.npz"), {n: a for n, a in ws})
    savez(os.path.join(d, "expected.npz"), dict(zip(outs, exp32)))
    for k, e32 in enumerate(exp32 if f32 is not None else []):
        g32 = np.asarray(f32[k], dtype=np.float32)
        assert g32.shape == e32.shape, (name, g32.shape, e32.shape)
        ok = np.allclose(g32, e32, atol=F32_CHECK_TOL, rtol=F32_CHECK_TOL, equal_nan=True)
        assert ok, "%s: float32 result strays from float64 by %g" % (
            name, float(np.max(np.abs(g32.astype(np.float64) - e32))))
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


# ---- spec v2: conv_transpose2d and resize --------------------------------

def conv_transpose2d_ref(x, w, b, strides, pads, opad, dil, group):
    """ONNX ConvTranspose by scatter: input pixel (ih, iw) times tap (kh, kw)
    lands on (ih*s - p + kh*d); output H = (H-1)*s - pt - pb + d*(kH-1) + op + 1."""
    n, c, h, wd = x.shape
    _, mg, kh, kw = w.shape
    pt, pl, pb, pr = pads
    full_h = (h - 1) * strides[0] + dil[0] * (kh - 1) + 1 + opad[0]
    full_w = (wd - 1) * strides[1] + dil[1] * (kw - 1) + 1 + opad[1]
    y = np.zeros((n, mg * group, full_h, full_w), dtype=x.dtype)
    cg = c // group
    for g in range(group):
        xg = x[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                wg = w[g * cg:(g + 1) * cg, :, i, j]          # (cg, mg)
                contrib = np.einsum("nchw,cm->nmhw", xg, wg)
                hs, ws = i * dil[0], j * dil[1]
                y[:, g * mg:(g + 1) * mg,
                  hs:hs + strides[0] * (h - 1) + 1:strides[0],
                  ws:ws + strides[1] * (wd - 1) + 1:strides[1]] += contrib
    oh = full_h - pt - pb
    ow = full_w - pl - pr
    y = y[:, :, pt:pt + oh, pl:pl + ow]
    if b is not None:
        y = y + b.reshape(1, -1, 1, 1)
    return y


def torch_close(name, got, want64):
    """torch's float32 result within a tolerance scaled by the values."""
    scale = max(1.0, float(np.max(np.abs(want64))))
    err = float(np.max(np.abs(np.asarray(got, dtype=np.float64) - want64)))
    assert err <= 1e-5 * scale, "%s: torch differs from the NumPy reference by %g" % (name, err)


def conv_transpose2d_torch(x, w, b, strides, pads, opad, dil, group):
    """torch.nn.functional.conv_transpose2d without padding (torch pads
    symmetrically), then ONNX's pads cropped and output_padding appended."""
    import torch
    import torch.nn.functional as F
    y = F.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), None, stride=strides,
                           dilation=dil, groups=group).numpy()
    y = np.pad(y, ((0, 0), (0, 0), (0, opad[0]), (0, opad[1])))
    pt, pl, pb, pr = pads
    y = y[:, :, pt:y.shape[2] - pb, pl:y.shape[3] - pr]
    if b is not None:
        y = y + b.reshape(1, -1, 1, 1)
    return y


def v2_conv_transpose2d_cases():
    # name, x shape, (M/group, kh, kw), strides, pads, output_padding, dilations, group, bias, weight?
    cfg = [
        ("basic", (1, 3, 4, 4), (2, 3, 3), [1, 1], [0, 0, 0, 0], [0, 0], [1, 1], 1, True, True),
        ("stride2_pads", (2, 3, 4, 5), (4, 3, 3), [2, 2], [1, 1, 1, 1], [0, 0], [1, 1], 1, True, True),
        ("stride2_outpad", (1, 2, 3, 4), (3, 3, 3), [2, 2], [1, 1, 1, 1], [1, 1], [1, 1], 1, True, True),
        ("asym", (1, 2, 5, 4), (3, 3, 2), [2, 3], [0, 1, 2, 0], [1, 2], [1, 1], 1, True, True),
        ("dilations", (1, 2, 4, 4), (2, 3, 2), [2, 1], [1, 0, 0, 1], [1, 1], [2, 3], 1, True, True),
        ("groups", (1, 4, 3, 3), (3, 2, 2), [2, 2], [0, 0, 0, 0], [1, 0], [1, 1], 2, True, True),
        ("depthwise", (2, 3, 4, 4), (1, 3, 3), [2, 2], [1, 1, 1, 1], [1, 1], [1, 1], 3, True, True),
        ("nobias_input_w", (1, 3, 3, 3), (2, 2, 2), [1, 1], [0, 0, 0, 0], [0, 0], [1, 1], 1, False, False),
        ("k4_s2_p1", (1, 4, 5, 5), (2, 4, 4), [2, 2], [1, 1, 1, 1], [0, 0], [1, 1], 1, False, True),
    ]
    for tag, xs, (mg, kh, kw), st, pads, opad, dil, group, bias, weight in cfg:
        name = "v2_conv_transpose2d_" + tag
        r = rng_for(name)
        x = randn(r, xs)
        w = randn(r, (xs[1], mg, kh, kw))
        b = randn(r, (mg * group,)) if bias else None
        fn = lambda X, W, B: conv_transpose2d_ref(X, W, B, st, pads, opad, dil, group)
        e64, e32 = both(fn, x, w, b)
        torch_close(name, conv_transpose2d_torch(x, w, b, st, pads, opad, dil, group), e64)
        given = (("strides", st, [1, 1]), ("pads", pads, [0, 0, 0, 0]),
                 ("output_padding", opad, [0, 0]), ("dilations", dil, [1, 1]),
                 ("group", group, 1))
        attrs = {k: v for k, v, default in given if v != default}
        ops = [("x", x, False), ("w", w, weight)] + ([] if b is None else [("b", b, weight)])
        emit(name, "conv_transpose2d", ops, attrs, e64, e32, version=2)


def resize_axis(n_in, n_out, scale, coord, mode, nearest, dt):
    """ONNX Resize along one axis, in dtype dt (float64: ONNX's formulas;
    float32: each step rounded as the kernel does): for every output index
    the two input taps and their weights (nearest: one tap, weight 1). The
    resized length L is n_in * scale with scales (ONNX's reference: not the
    floored output size), n_out with sizes."""
    if scale is not None:
        s = dt(np.float32(scale))
        L = dt(n_in) * s
    else:
        s = dt(n_out) / dt(n_in)
        L = dt(n_out)
    taps = []
    for o in range(n_out):
        if coord == "asymmetric":
            xo = dt(o) / s
        elif coord == "align_corners":
            xo = dt(0) if L == 1 else (dt(o) * dt(n_in - 1)) / (L - dt(1))
        elif coord == "pytorch_half_pixel" and not L > 1:
            xo = dt(0)
        else:
            xo = (dt(o) + dt(0.5)) / s - dt(0.5)
        fl = np.floor(xo)
        f = xo - fl
        i = int(fl)
        if mode == "nearest":
            if nearest == "round_prefer_floor":
                i += int(f > 0.5)
            elif nearest == "round_prefer_ceil":
                i += int(f >= 0.5)
            elif nearest == "ceil":
                i = int(np.ceil(xo))
            i = min(max(i, 0), n_in - 1)
            taps.append((i, i, dt(1), dt(0)))
        else:
            taps.append((min(max(i, 0), n_in - 1), min(max(i + 1, 0), n_in - 1), dt(1) - f, f))
    return taps


def resize_ref(x, out_hw, scales, coord, mode, nearest):
    dt = np.float64 if x.dtype == np.float64 else np.float32
    th = resize_axis(x.shape[2], out_hw[0], None if scales is None else scales[0],
                     coord, mode, nearest, dt)
    tw = resize_axis(x.shape[3], out_hw[1], None if scales is None else scales[1],
                     coord, mode, nearest, dt)
    y = np.zeros(x.shape[:2] + tuple(out_hw), dtype=x.dtype)
    for oh, (t, bt, wt, wb) in enumerate(th):
        for ow, (l, rt, wl, wr) in enumerate(tw):
            top = wl * x[:, :, t, l] + wr * x[:, :, t, rt]
            bot = wl * x[:, :, bt, l] + wr * x[:, :, bt, rt]
            y[:, :, oh, ow] = wt * top + wb * bot
    return y


def resize_torch(x, out_hw, scales, coord, mode):
    """F.interpolate: nearest is ONNX's asymmetric + floor; bilinear with
    align_corners False is half_pixel (pytorch_half_pixel), True is
    align_corners."""
    import torch
    import torch.nn.functional as F
    kw = {"size": tuple(out_hw)} if scales is None else {"scale_factor": tuple(scales)}
    if mode == "nearest":
        return F.interpolate(torch.from_numpy(x), mode="nearest", **kw).numpy()
    return F.interpolate(torch.from_numpy(x), mode="bilinear",
                         align_corners=coord == "align_corners", **kw).numpy()


def v2_resize_cases():
    # name, x shape, mode, coordinate mode, nearest mode, scales, sizes, check with torch?
    cfg = [
        ("nearest_up_scales", (1, 2, 3, 4), "nearest", "half_pixel", "round_prefer_floor",
         [2.0, 3.0], None, False),
        ("nearest_asym_floor", (2, 2, 3, 3), "nearest", "asymmetric", "floor", [2.0, 3.0], None, True),
        ("nearest_asym_floor_down", (1, 2, 8, 6), "nearest", "asymmetric", "floor", [0.5, 0.5],
         None, True),
        ("nearest_prefer_ceil_sizes_down", (1, 2, 7, 9), "nearest", "half_pixel",
         "round_prefer_ceil", None, [3, 4], False),
        ("nearest_align_ceil_sizes_up", (1, 1, 3, 4), "nearest", "align_corners", "ceil", None,
         [7, 9], False),
        ("nearest_pytorch_half_floor", (1, 2, 5, 5), "nearest", "pytorch_half_pixel", "floor",
         [1.5, 0.75], None, False),
        ("linear_half_up", (1, 2, 4, 5), "linear", "half_pixel", "round_prefer_floor",
         [2.0, 2.0], None, True),
        ("linear_half_sizes_down", (2, 2, 8, 9), "linear", "half_pixel", "round_prefer_floor",
         None, [3, 5], True),
        ("linear_align_sizes_up", (1, 3, 4, 4), "linear", "align_corners", "round_prefer_floor",
         None, [7, 10], True),
        ("linear_align_down", (1, 2, 8, 8), "linear", "align_corners", "round_prefer_floor",
         [0.5, 0.75], None, True),
        # H * scale not whole: align_corners divides by H * scale - 1 (ONNX), not by OH - 1
        ("linear_align_frac_scales", (1, 2, 9, 7), "linear", "align_corners",
         "round_prefer_floor", [0.5, 1.7], None, False),
        ("linear_asym_scales", (1, 2, 4, 6), "linear", "asymmetric", "round_prefer_floor",
         [1.5, 0.75], None, False),
        ("linear_pytorch_half_out1", (1, 2, 4, 6), "linear", "pytorch_half_pixel",
         "round_prefer_floor", None, [1, 8], False),
        ("linear_pytorch_half_scales", (1, 2, 5, 3), "linear", "pytorch_half_pixel",
         "round_prefer_floor", [2.5, 1.5], None, True),
    ]
    for tag, xs, mode, coord, nearest, scales, sizes, with_torch in cfg:
        name = "v2_resize_" + tag
        r = rng_for(name)
        x = randn(r, xs)
        if sizes is not None:
            out_hw = list(sizes)
        else:   # ONNX: floor(H * scale), the product in double
            out_hw = [int(math.floor(xs[2 + i] * float(np.float32(scales[i])))) for i in range(2)]
        e64, e32 = both(lambda X: resize_ref(X, out_hw, scales, coord, mode, nearest), x)
        if with_torch:
            torch_close(name, resize_torch(x, out_hw, scales, coord, mode), e64)
        attrs = {"mode": mode}
        if coord != "half_pixel":
            attrs["coordinate_transformation_mode"] = coord
        if nearest != "round_prefer_floor":
            attrs["nearest_mode"] = nearest
        if scales is not None:
            attrs["scales"] = scales
        else:
            attrs["sizes"] = sizes
        emit(name, "resize", [("x", x, False)], attrs, e64, e32, version=2)
# C99 Annex F pow special cases (x, y), the first elements of v2_pow: the
# kernel must give NumPy's value bit for bit there (tests/e2e/v2ops.sh).
POW_SPECIAL = [
    (np.nan, 0.0), (np.nan, -0.0), (-np.inf, 0.0), (1.0, np.nan), (1.0, np.inf), (-1.0, np.inf),
    (-1.0, -np.inf), (0.0, -3.0), (-0.0, -3.0), (-0.0, -2.0), (-0.0, -0.5), (-0.0, -np.inf),
    (-0.0, 3.0), (0.0, 3.0), (-0.0, 2.0), (-0.0, 0.5), (-0.0, 0.7), (-0.0, np.inf),
    (0.5, -np.inf), (-0.5, -np.inf), (2.0, -np.inf), (-2.0, -np.inf), (0.5, np.inf),
    (-0.5, np.inf), (2.0, np.inf), (-2.0, np.inf), (-np.inf, -3.0), (-np.inf, -2.0),
    (-np.inf, -0.5), (-np.inf, 3.0), (-np.inf, 2.0), (-np.inf, 0.5), (np.inf, -1.0),
    (np.inf, 0.1), (-8.0, 1.0 / 3.0), (-2.0, 0.5), (np.nan, 1.0), (2.0, np.nan),
    (-2.0, 3.0), (-2.0, -3.0), (-3.0, 2.0), (-0.0, 1.0), (4.0, 0.5), (2.0, 128.0),
    (2.0, -149.0), (2.0, -150.0), (-2.0, -149.0), (-1.5, 7.0), (0.3, 2.0), (-0.7, 1.0),
]


def v2_ew_cases():
    """spec v2 elementwise ops: pow, min/max (n-ary, broadcasting),
    hard_sigmoid, hard_swish, prelu, elu, softplus. Special values (±0,
    ±Inf, NaN) next to random ones."""
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5], dtype=np.float32)

    def with_special(x):
        flat = x.reshape(-1)
        flat[:len(special)] = special
        return x

    # pow: the special pairs, then random bases (both signs) with random
    # exponents, integer exponents for the negative bases
    r = rng_for("v2_pow")
    a = (randn(r, (4, 25)) * 3.0).astype(np.float32)
    b = (randn(r, (4, 25)) * 2.0).astype(np.float32)
    b[:, ::2] = np.round(b[:, ::2])
    b[1] = np.abs(b[1]) * 3.0       # large results
    af, bf = a.reshape(-1), b.reshape(-1)
    for i, (x, y) in enumerate(POW_SPECIAL):
        af[i], bf[i] = x, y
    with np.errstate(all="ignore"):   # overflows to Inf, on purpose
        e64, e32 = both(np.power, a, b)
        emit("v2_pow", "pow", [("x", a, False), ("x2", b, False)], {}, e64, e32, version=2)
    # pow broadcasting an exponent row over positive bases: the shortcuts
    # (2, 0.5, 1) next to general exponents; the exponent is a weight
    r = rng_for("v2_pow_bcast")
    a = np.abs(randn(r, (3, 4, 6))).astype(np.float32) * 2.0 + 0.01
    b = np.array([2.0, 0.5, 1.0, -1.5, 3.0, 0.333], dtype=np.float32)
    with np.errstate(all="ignore"):
        e64, e32 = both(np.power, a, b)
    emit("v2_pow_bcast", "pow", [("x", a, False), ("e", b, True)], {}, e64, e32, version=2)

    # min/max: n inputs broadcast together, folded left to right
    def fold(fn):
        def f(*xs):
            acc = xs[0]
            for x in xs[1:]:
                acc = fn(acc, x)
            return acc
        return f
    cfg = [
        ("v2_min3", "min", [(2, 3, 4), (3, 1), (4,)], False),
        ("v2_max3", "max", [(4,), (2, 3, 4), (3, 1)], False),
        ("v2_min1", "min", [(3, 5)], False),
        ("v2_max2_weight", "max", [(2, 5), (5,)], True),
    ]
    for name, op, shapes, weight in cfg:
        r = rng_for(name)
        xs = [randn(r, sh) for sh in shapes]
        if len(xs[0].reshape(-1)) >= len(special):
            with_special(xs[0])
        # a NaN and ±0 in a later input too
        xs[-1].reshape(-1)[0] = np.nan
        xs[-1].reshape(-1)[-1] = -0.0
        fn = fold(np.minimum if op == "min" else np.maximum)
        e64, e32 = both(fn, *xs)
        ops = [("x%d" % i, x, weight and i == len(xs) - 1) for i, x in enumerate(xs)]
        emit(name, op, ops, {}, e64, e32, version=2)

    # the unary ones; attrs are float32, so the reference uses their float32 values
    def hsig(alpha, beta):
        a32, b32 = float(np.float32(alpha)), float(np.float32(beta))
        return lambda x: np.clip(a32 * x + b32, 0.0, 1.0)

    def elu(alpha):
        a32 = float(np.float32(alpha))
        return lambda x: np.where(x >= 0, x, a32 * np.expm1(np.minimum(x, 0)))
    cfg = [
        ("v2_hard_sigmoid", "hard_sigmoid", {}, 4.0, hsig(0.2, 0.5)),
        ("v2_hard_sigmoid_attrs", "hard_sigmoid", {"alpha": 0.5, "beta": 0.25}, 2.0, hsig(0.5, 0.25)),
        ("v2_hard_swish", "hard_swish", {}, 3.0,
         lambda x: x * np.clip(x / 6.0 + 0.5, 0.0, 1.0)),
        ("v2_elu", "elu", {}, 2.5, elu(1.0)),
        ("v2_elu_alpha", "elu", {"alpha": 0.5}, 2.5, elu(0.5)),
        ("v2_softplus", "softplus", {}, 8.0, lambda x: np.logaddexp(0.0, x)),
    ]
    for name, op, attrs, scale, fn in cfg:
        r = rng_for(name)
        x = with_special((randn(r, (3, 4, 5)) * scale).astype(np.float32))
        with np.errstate(all="ignore"):
            e64, e32 = both(fn, x)
        emit(name, op, [("x", x, False)], attrs, e64, e32, version=2)

    # prelu: a per-channel slope (PyTorch's PReLU as exported: (C, 1, 1)),
    # a weight; and one slope for all
    for name, xs, ss in [("v2_prelu", (2, 3, 4, 4), (3, 1, 1)), ("v2_prelu_scalar", (4, 5), (1,))]:
        r = rng_for(name)
        x = with_special(randn(r, xs))
        slope = (r.uniform(-0.5, 0.5, size=ss)).astype(np.float32)
        fn = lambda x, s: np.where(x < 0, s * x, x)
        e64, e32 = both(fn, x, slope)
        emit(name, "prelu", [("x", x, False), ("slope", slope, name == "v2_prelu")], {},
             e64, e32, version=2)


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


INT64_MAX = 2**63 - 1
INT64_MIN = -2**63


def np_pad_onnx(x, pads, mode, value=0.0):
    """ONNX Pad as the kernel defines it: negative pads crop first (a slice),
    then np.pad pads what is left with the positive ones."""
    r = x.ndim
    begin, end = pads[:r], pads[r:]
    crop = tuple(slice(max(-b, 0), x.shape[d] - max(-e, 0)) for d, (b, e) in enumerate(zip(begin, end)))
    width = [(max(b, 0), max(e, 0)) for b, e in zip(begin, end)]
    y = x[crop]
    if mode == "constant":
        return np.pad(y, width, mode="constant", constant_values=value)
    return np.pad(y, width, mode=mode)


def onnx_slice(x, starts, ends, axes=None, steps=None):
    """ONNX Slice through Python slicing, which clamps start/stop as ONNX
    does (INT64_MAX/INT64_MIN and negative steps included) but in one case:
    a start below -dim with a negative step is -1 (empty) in Python and 0
    in ONNX (starts clamp to [0, dim-1] for negative steps), so such a
    start is made 0 here first."""
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    idx = [slice(None)] * x.ndim
    for s, e, a, k in zip(starts, ends, axes, steps):
        if k < 0 and s < -x.shape[a]:
            s = 0
        idx[a] = slice(s, e, k)
    return x[tuple(idx)]


def v2_move_cases():
    """spec v2 data movement (eulernpu: 2): pad, slice, squeeze, unsqueeze.
    The results are input bits (or pad's value), so inputs carry the special
    values (-0, NaN, ±Inf) too."""
    special = np.array([-0.0, np.nan, np.inf, -np.inf], dtype=np.float32)

    def data(name, shape):
        x = randn(rng_for(name), shape)
        x.reshape(-1)[3:3 + len(special)] = special
        return x

    pads = [
        ("v2_pad_constant", (2, 3, 4), [0, 1, 2, 1, 0, 3], "constant", 1.5),
        ("v2_pad_reflect", (2, 3, 5), [1, 2, 0, 0, 1, 4], "reflect", None),
        ("v2_pad_edge", (3, 1, 4), [2, 0, 1, 1, 3, 5], "edge", None),
        ("v2_pad_negative", (3, 4, 6), [-1, 2, -2, 1, -3, 3], "constant", -2.0),
        ("v2_pad_negative_edge", (4, 5), [-2, 3, 1, -4], "edge", None),
    ]
    for name, shape, pd, mode, value in pads:
        x = data(name, shape)
        attrs = {"pads": pd}
        if mode != "constant":
            attrs["mode"] = mode
        if value is not None:
            attrs["value"] = value
        y = np_pad_onnx(x, pd, mode, 0.0 if value is None else value)
        emit(name, "pad", [("x", x, False)], attrs, f64(y), y, version=2)

    slices = [
        ("v2_slice", (4, 5, 6), [1, 0], [3, 6], [0, 2], [1, 2]),
        ("v2_slice_defaults", (5, 6, 3), [-4, 1], [-1, 100], None, None),
        ("v2_slice_neg_steps", (6, 7, 4), [-1, 5, 2], [-7, 0, -100], [1, 0, -1], [-2, -3, -1]),
        ("v2_slice_clamp", (4, 6, 5), [INT64_MIN, INT64_MAX, -1], [INT64_MAX, INT64_MIN, INT64_MIN],
         [0, 1, 2], [INT64_MAX, -1, INT64_MIN]),
        ("v2_slice_empty", (3, 4), [2, 0], [1, 4], [0, 1], [1, 1]),
        ("v2_slice_neg_step_low_start", (4, 5), [-100, INT64_MAX], [INT64_MIN, INT64_MIN], [1, 0], [-1, -2]),
    ]
    for name, shape, st, en, ax, sp in slices:
        x = data(name, shape)
        attrs = {"starts": st, "ends": en}
        if ax is not None:
            attrs["axes"] = ax
        if sp is not None:
            attrs["steps"] = sp
        y = onnx_slice(x, st, en, ax, sp)
        emit(name, "slice", [("x", x, False)], attrs, f64(y), y, version=2)

    for name, shape, axes in [("v2_squeeze", (1, 3, 1, 4, 1), [0, -1]),
                              ("v2_squeeze_all", (1, 3, 1, 4, 1), None)]:
        x = data(name, shape)
        y = np.squeeze(x, axis=None if axes is None else tuple(axes))
        emit(name, "squeeze", [("x", x, False)], {} if axes is None else {"axes": axes},
             f64(y), y, version=2)
    for name, shape, axes in [("v2_unsqueeze", (3, 4), [0, -1, 2]),
                              ("v2_unsqueeze_neg", (2, 3, 4), [-2, -5])]:
        x = data(name, shape)
        y = np.expand_dims(x, axis=tuple(axes))
        emit(name, "unsqueeze", [("x", x, False)], {"axes": axes}, f64(y), y, version=2)
def reduce_seq32(x, axes, keepdims, op):
    """The documented float32 order: the reduced elements in ascending
    row-major order of their indices, one float32 step at a time (sum/mean:
    s = s + x from 0; max/min from -inf/+inf, NaN propagates); mean divides
    by the count."""
    r = x.ndim
    red = sorted(range(r)) if axes is None else sorted(a % r for a in axes)
    kept = [d for d in range(r) if d not in red]
    t = np.transpose(x, kept + red)
    t = t.reshape(t.shape[:len(kept)] + (-1,))
    init = {"sum": 0.0, "mean": 0.0, "max": -np.inf, "min": np.inf}[op]
    s = np.full(t.shape[:-1], init, dtype=np.float32)
    nan = np.zeros(t.shape[:-1], dtype=bool)
    for i in range(t.shape[-1]):
        v = t[..., i]
        if op in ("sum", "mean"):
            s = (s + v).astype(np.float32)
        else:
            nan |= np.isnan(v)
            s = np.maximum(s, v) if op == "max" else np.minimum(s, v)
    if op == "mean":
        s = (s / np.float32(t.shape[-1])).astype(np.float32)
    if op in ("max", "min"):
        s = np.where(nan, np.float32(np.nan), s)
    if keepdims:
        s = s.reshape([1 if d in red else x.shape[d] for d in range(r)])
    return s


def v2_reduce_cases():
    """spec v2 reduce_mean/sum/max/min: several axes sets (absent = all,
    negative, unsorted), keepdims 0 and 1; max/min inputs carry Inf and NaN."""
    cfg = [
        ("v2_reduce_sum_all", "sum", (3, 4, 5), None, None),
        ("v2_reduce_sum_last_nokeep", "sum", (3, 4, 5), [-1], 0),
        ("v2_reduce_sum_axes02", "sum", (3, 4, 5), [0, 2], 1),
        ("v2_reduce_mean_all_nokeep", "mean", (3, 4, 5), None, 0),
        ("v2_reduce_mean_axes_neg", "mean", (2, 3, 4, 5), [-3, -1], None),
        ("v2_reduce_mean_axis0", "mean", (6, 7), [0], 0),
        ("v2_reduce_max_axis1", "max", (3, 4, 5), [1], 0),
        ("v2_reduce_max_unsorted", "max", (2, 3, 2, 4), [3, 1], 1),
        ("v2_reduce_min_axes_neg", "min", (3, 4, 5), [-3, -1], 1),
        ("v2_reduce_min_all", "min", (4, 6), None, 0),
    ]
    fns = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}
    for name, op, shape, axes, keep in cfg:
        r = rng_for(name)
        x = randn(r, shape)
        if op in ("max", "min"):   # specials: a NaN (not in a reduce-all), infinities
            flat = x.reshape(-1)
            if axes is not None:
                flat[0] = np.nan
            flat[7] = np.inf
            flat[11] = -np.inf
        attrs = {}
        if axes is not None:
            attrs["axes"] = axes
        if keep is not None:
            attrs["keepdims"] = keep
        ax = None if axes is None else tuple(axes)
        kd = keep != 0
        e64 = fns[op](f64(x), axis=ax, keepdims=kd)
        e32 = reduce_seq32(x, axes, kd, op)
        emit(name, "reduce_" + op, [("x", x, False)], attrs, e64, e32, version=2)


def layer_norm_seq32(x, axis, eps, scale, bias):
    """The documented float32 order: mean = (s = s + x from 0) / D;
    q = fma(d, d, q) from 0 with d = x - mean; var = q / D;
    y = (x - mean) / sqrt(var + eps), * scale, + bias."""
    ax = axis % x.ndim
    lead = x.shape[:ax]
    t = x.reshape(lead + (-1,))
    D = t.shape[-1]
    f = np.float32
    s = np.zeros(lead, dtype=f)
    for i in range(D):
        s = (s + t[..., i]).astype(f)
    mean = (s / f(D)).astype(f)
    q = np.zeros(lead, dtype=f)
    for i in range(D):
        d = (t[..., i] - mean).astype(f)
        q = (d.astype(np.float64) * d + q).astype(f)
    var = (q / f(D)).astype(f)
    den = np.sqrt((var + f(eps)).astype(f)).astype(f)
    y = ((t - mean[..., None]) / den[..., None]).astype(f).reshape(x.shape)
    if scale is not None:
        y = (y * scale).astype(f)
    if bias is not None:
        y = (y + bias).astype(f)
    return y


def v2_layer_norm_cases():
    """spec v2 layer_norm: with and without scale/bias, broadcast scale/bias,
    axis not last, epsilon given."""
    # name, x shape, axis (None = default -1), epsilon, scale shape, bias shape
    cfg = [
        ("v2_layer_norm", (2, 3, 8), None, None, (8,), (8,)),
        ("v2_layer_norm_plain", (4, 6), None, 1e-3, None, None),
        ("v2_layer_norm_scale_only", (2, 5, 4), -1, None, (4,), None),
        ("v2_layer_norm_axis1", (2, 3, 4), 1, None, (3, 4), (1, 4)),
        ("v2_layer_norm_axis_neg3", (2, 3, 4, 2), -3, 1e-2, (3, 1, 2), (2,)),
    ]
    for name, shape, axis, eps, ss, bs in cfg:
        r = rng_for(name)
        x = (randn(r, shape) * 2 + 0.5).astype(np.float32)
        ax = (-1 if axis is None else axis) % len(shape)
        e = 1e-5 if eps is None else eps
        scale = randn(r, ss) if ss else None
        bias = randn(r, bs) if bs else None
        xf = f64(x)
        red = tuple(range(ax, len(shape)))
        mu = xf.mean(axis=red, keepdims=True)
        var = ((xf - mu) ** 2).mean(axis=red, keepdims=True)
        e64 = (xf - mu) / np.sqrt(var + np.float32(e).astype(np.float64))
        if scale is not None:
            e64 = e64 * f64(scale)
        if bias is not None:
            e64 = e64 + f64(bias)
        e32 = layer_norm_seq32(x, ax, np.float32(e), scale, bias)
        operands = [("x", x, False)]
        operands += [("scale", scale, True)] if scale is not None else []
        operands += [("bias", bias, True)] if bias is not None else []
        attrs = {}
        if axis is not None:
            attrs["axis"] = axis
        if eps is not None:
            attrs["epsilon"] = eps
        emit(name, "layer_norm", operands, attrs, e64, e32, version=2)
# ---- spec v2: conv1d, 1-D pools, ceil_mode, maxpool dilations -----------

def pool_nd_ref(x, kernel, strides, pads, dil, mode, incl, ceil):
    """MaxPool / AveragePool over x's spatial dims (1 or 2) in float64.
    pads: [begins..., ends...] (ONNX). ceil: the ceiling of the output size,
    less a last window that would start in the end padding (ONNX, PyTorch).
    count_include_pad counts a window's taps inside the padded input only
    (ONNX Runtime, PyTorch: the part a ceil window runs past the end padding
    does not count)."""
    nsp = x.ndim - 2
    size = x.shape[2:]
    outs = []
    for i in range(nsp):
        num = size[i] + pads[i] + pads[nsp + i] - ((kernel[i] - 1) * dil[i] + 1)
        o = num // strides[i] + 1
        if ceil and num % strides[i] and o * strides[i] < size[i] + pads[i]:
            o += 1
        outs.append(o)
    y = np.zeros(x.shape[:2] + tuple(outs), dtype=x.dtype)
    for idx in itertools.product(*[range(o) for o in outs]):
        sub, cnt = x, 1
        for i in range(nsp):
            b = idx[i] * strides[i] - pads[i]
            taps = [b + j * dil[i] for j in range(kernel[i])]
            sub = np.take(sub, [t for t in taps if 0 <= t < size[i]], axis=2 + i)
            cnt *= min(b + kernel[i], size[i] + pads[nsp + i]) - b
        flat = sub.reshape(sub.shape[0], sub.shape[1], -1)
        if mode == "max":
            v = flat.max(axis=2) if flat.shape[2] else np.full(flat.shape[:2], -np.inf)
        else:
            v = flat.sum(axis=2) / (cnt if incl else flat.shape[2])
        y[(slice(None), slice(None)) + idx] = v
    return y


def torch_pool(x, kernel, strides, pads, dil, mode, incl, ceil):
    """The same pool by PyTorch in float64 (symmetric pads only)."""
    import torch
    import torch.nn.functional as F
    nsp = x.ndim - 2
    assert list(pads[:nsp]) == list(pads[nsp:]), "torch pads are symmetric"
    t = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float64))
    p = tuple(pads[:nsp])
    if mode == "max":
        fn = F.max_pool1d if nsp == 1 else F.max_pool2d
        y = fn(t, tuple(kernel), tuple(strides), p, tuple(dil), ceil_mode=bool(ceil))
    else:
        fn = F.avg_pool1d if nsp == 1 else F.avg_pool2d
        y = fn(t, tuple(kernel), tuple(strides), p, ceil_mode=bool(ceil),
               count_include_pad=bool(incl))
    return y.numpy()


def conv1d_ref(x, w, b, s, pads, d, group):
    """conv1d as conv2d with H = 1 (float64)."""
    y = conv2d_ref(x[:, :, None, :], w[:, :, None, :], b, [1, s], [0, pads[0], 0, pads[1]],
                   [1, d], group)
    return y[:, :, 0, :]


def torch_conv1d(x, w, b, s, pads, d, group):
    import torch
    import torch.nn.functional as F
    t = F.pad(torch.from_numpy(f64(x)), (pads[0], pads[1]))
    bb = None if b is None else torch.from_numpy(f64(b))
    return F.conv1d(t, torch.from_numpy(f64(w)), bb, s, 0, d, group).numpy()


def v2_conv_cases():
    """conv1d (strides, pads, dilations, groups, depthwise) checked against
    PyTorch's conv1d too; the pools' ceil_mode, count_include_pad and
    maxpool dilations against PyTorch where its symmetric pads can say it."""
    # name, x shape, (M, k), stride, pads [b, e], dilation, group, bias, w a weight?
    cfg = [
        ("v2_conv1d_basic", (2, 3, 16), (4, 3), 1, [0, 0], 1, 1, True, True),
        ("v2_conv1d_strides_pads", (1, 4, 17), (5, 4), 2, [2, 1], 1, 1, True, True),
        ("v2_conv1d_dilations", (1, 3, 20), (2, 3), 1, [3, 3], 3, 1, False, False),
        ("v2_conv1d_groups", (2, 6, 12), (4, 3), 1, [1, 1], 1, 2, True, True),
        ("v2_conv1d_depthwise", (1, 5, 15), (5, 5), 2, [2, 2], 1, 5, True, True),
    ]
    for name, xs, (m, k), st, pads, dil, group, bias, weight in cfg:
        r = rng_for(name)
        x = randn(r, xs)
        w = randn(r, (m, xs[1] // group, k))
        b = randn(r, (m,)) if bias else None
        e64, e32 = both(lambda X, W, B: conv1d_ref(X, W, B, st, pads, dil, group), x, w, b)
        assert np.allclose(e64, torch_conv1d(x, w, b, st, pads, dil, group), rtol=1e-12,
                           atol=1e-12), name
        attrs = {}
        if st != 1:
            attrs["strides"] = [st]
        if pads != [0, 0]:
            attrs["pads"] = pads
        if dil != 1:
            attrs["dilations"] = [dil]
        if group != 1:
            attrs["group"] = group
        ops = [("x", x, False), ("w", w, weight)]
        if b is not None:
            ops.append(("b", b, weight))
        emit(name, "conv1d", ops, attrs, e64, e32, version=2)
    # name, op, x shape, kernel, strides (None: default), pads, dilations, incl, ceil
    cfg = [
        ("v2_maxpool1d", "maxpool1d", (2, 3, 11), [3], [2], [1, 1], [2], 0, 1),
        ("v2_maxpool1d_default", "maxpool1d", (1, 2, 9), [2], None, [0, 0], [1], 0, 0),
        ("v2_avgpool1d", "avgpool1d", (2, 3, 11), [3], [2], [1, 1], [1], 1, 1),
        ("v2_avgpool1d_exclude_asym", "avgpool1d", (1, 2, 10), [4], [3], [2, 1], [1], 0, 1),
        ("v2_maxpool2d_ceil", "maxpool2d", (1, 2, 7, 8), [3, 3], [2, 2], [1, 1, 1, 1],
         [1, 1], 0, 1),
        ("v2_avgpool2d_ceil", "avgpool2d", (1, 2, 7, 8), [3, 2], [2, 2], [0, 0, 0, 0],
         [1, 1], 0, 1),
        ("v2_avgpool2d_ceil_pads_include", "avgpool2d", (2, 2, 8, 8), [3, 3], [2, 2],
         [1, 1, 1, 1], [1, 1], 1, 1),
        ("v2_avgpool2d_ceil_pads_exclude", "avgpool2d", (2, 2, 8, 8), [3, 3], [2, 2],
         [1, 1, 1, 1], [1, 1], 0, 1),
        ("v2_avgpool2d_ceil_asym_include", "avgpool2d", (1, 2, 8, 9), [2, 3], [3, 2],
         [1, 0, 0, 1], [1, 1], 1, 1),
        ("v2_maxpool2d_dilations", "maxpool2d", (1, 3, 9, 10), [2, 3], [1, 2], [1, 1, 1, 1],
         [2, 2], 0, 0),
        ("v2_maxpool2d_dilations_ceil", "maxpool2d", (1, 2, 10, 9), [3, 2], [2, 3],
         [1, 0, 2, 1], [2, 3], 0, 1),
    ]
    for name, op, xs, kern, st, pads, dil, incl, ceil in cfg:
        r = rng_for(name)
        x = randn(r, xs)
        mode = "max" if op.startswith("max") else "avg"
        stv = st if st is not None else kern
        e64, e32 = both(lambda X: pool_nd_ref(X, kern, stv, pads, dil, mode, incl, ceil), x)
        nsp = len(kern)
        if list(pads[:nsp]) == list(pads[nsp:]):
            got = torch_pool(x, kern, stv, pads, dil, mode, incl, ceil)
            assert got.shape == e64.shape and np.allclose(got, e64, rtol=1e-12, atol=1e-12), name
        attrs = {"kernel": kern}
        if st is not None:
            attrs["strides"] = st
        if any(pads):
            attrs["pads"] = pads
        if any(v != 1 for v in dil):
            attrs["dilations"] = dil
        if incl:
            attrs["count_include_pad"] = 1
        if ceil:
            attrs["ceil_mode"] = 1
        emit(name, op, [("x", x, False)], attrs, e64, e32, version=2)
    for name, xs in [("v2_global_avgpool_1d", (2, 3, 17)), ("v2_global_avgpool_3d", (1, 2, 3, 4, 5))]:
        r = rng_for(name)
        x = randn(r, xs)
        axes = tuple(range(2, len(xs)))
        e64, e32 = both(lambda X: X.mean(axis=axes, keepdims=True), x)
        emit(name, "global_avgpool", [("x", x, False)], {}, e64, e32, version=2)
def v2_split_cases():
    """split: equal parts (axis 0), given sizes, a negative axis."""
    for name, xs, axis, sizes, n in [("v2_split_equal", (6, 4), None, None, 3),
                                     ("v2_split_sizes", (2, 7, 3), 1, [2, 4, 1], 3),
                                     ("v2_split_neg_axis", (3, 4, 6), -1, [1, 5], 2),
                                     ("v2_split_neg_axis_equal", (2, 3, 8), -1, None, 4)]:
        r = rng_for(name)
        x = randn(r, xs)
        attrs = {}
        if axis is not None:
            attrs["axis"] = axis
        if sizes is not None:
            attrs["split"] = sizes
        ax = 0 if axis is None else axis
        cuts = np.cumsum(sizes)[:-1] if sizes is not None else n
        parts = np.split(f64(x), cuts, axis=ax)
        emit(name, "split", [("x", x, False)], attrs, parts, np.split(x, cuts, axis=ax),
             version=2, outs=["y%d" % i for i in range(len(parts))])


def v2_gather_cases():
    """gather: axis 0 and 1, a scalar index, 2-D indices, negative indices
    (an int64 weight)."""
    for name, xs, idx, axis in [("v2_gather_axis0", (5, 4), [4, 0, 2, 0], None),
                                ("v2_gather_axis1", (3, 6, 2), [[0, 5], [1, 1]], 1),
                                ("v2_gather_scalar", (4, 5), 3, None),
                                ("v2_gather_2d_indices", (6, 3), [[5, 0, 1], [2, 2, 4]], 0),
                                ("v2_gather_negative", (2, 3, 4), [-1, 0, -4, 2], -1)]:
        r = rng_for(name)
        x = randn(r, xs)
        ix = np.array(idx, dtype=np.int64)
        ax = 0 if axis is None else axis
        emit(name, "gather", [("x", x, False), ("idx", ix, True)],
             {} if axis is None else {"axis": axis},
             np.take(f64(x), ix, axis=ax), np.take(x, ix, axis=ax), version=2)


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
    v2_reduce_cases()
    v2_layer_norm_cases()
    v2_conv_transpose2d_cases()
    v2_resize_cases()
    v2_ew_cases()
    softmax_cases()
    conv_cases()
    pool_cases()
    batchnorm_cases()
    movement_cases()
    v2_move_cases()
    v2_conv_cases()
    v2_split_cases()
    v2_gather_cases()
    with open(os.path.join(HERE, "cases.txt"), "w") as f:
        f.write("".join(c + "\n" for c in CASES))
    print("%d cases" % len(CASES))


if __name__ == "__main__":
    main()
