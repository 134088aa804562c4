#!/usr/bin/python3
"""qdq.py: quantised torchvision models for tests/conformance/int8_models.sh.

  qdq.py build OUT NAME   export NAME (resnet18, mobilenet_v2; random weights,
                          examples/resnet18_onnx/export.py's init) to ONNX at
                          16x3x64x64, calibrate per-tensor activation ranges
                          (min/max) on 4 fixed random inputs with a NumPy float
                          evaluation of the graph, and write OUT/NAME/:
                          model.onnx (QDQ, ONNX Runtime's defaults: int8
                          symmetric per-channel weights, uint8 asymmetric
                          activations, int32 biases of scale x_scale*w_scale;
                          Gemm as MatMul + Add; the output the uint8 logits
                          "yq"), input.npz (x: 16 fixed inputs) and
                          float.npz (y: PyTorch's float logits on them)
  qdq.py ref SPEC WEIGHTS INPUT OUT
                          evaluate the spec `eulernpu import` wrote with
                          integer arithmetic (ONNX's definitions and
                          docs/spec-format.md's requantisation), in NumPy only,
                          into OUT (npz of the spec's outputs)

Nothing here calls eulernpu's C code.
"""
import os
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
N, H = 16, 64


# ---- NumPy helpers ---------------------------------------------------------

def im2col(x, kh, kw, strides, pads, dil, pad_value):
    """x [N, C, H, W] -> cols [N, OH, OW, C, kh, kw] (a view where it can)."""
    n, c, h, w = x.shape
    pt, pl, pb, pr = pads
    xp = np.full((n, c, h + pt + pb, w + pl + pr), pad_value, dtype=x.dtype)
    xp[:, :, pt:pt + h, pl:pl + w] = x
    oh = (h + pt + pb - dil[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (w + pl + pr - dil[1] * (kw - 1) - 1) // strides[1] + 1
    cols = np.empty((n, oh, ow, c, kh, kw), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            hs, ws = i * dil[0], j * dil[1]
            cols[:, :, :, :, i, j] = xp[:, :, hs:hs + strides[0] * oh:strides[0],
                                        ws:ws + strides[1] * ow:strides[1]].transpose(0, 2, 3, 1)
    return cols, oh, ow


def conv(x, w, strides, pads, dil, group, pad_value=0):
    """sum over taps of x * w, in float64 (exact for the integer sums here)"""
    n, c = x.shape[:2]
    m, cg, kh, kw = w.shape
    cols, oh, ow = im2col(x, kh, kw, strides, pads, dil, pad_value)
    out = np.empty((n, m, oh, ow), dtype=np.float64)
    mg = m // group
    for g in range(group):
        cg_cols = cols[:, :, :, g * cg:(g + 1) * cg].reshape(n * oh * ow, cg * kh * kw)
        wg = w[g * mg:(g + 1) * mg].reshape(mg, cg * kh * kw)
        out[:, g * mg:(g + 1) * mg] = (cg_cols.astype(np.float64) @ wg.astype(np.float64).T) \
            .reshape(n, oh, ow, mg).transpose(0, 3, 1, 2)
    return out


def attr(node, name, default):
    import onnx
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


# ---- build -----------------------------------------------------------------

def float_eval(model, x):
    """every value of the float graph on x (float32; for calibration)"""
    from onnx import numpy_helper
    g = model.graph
    v = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    v[g.input[0].name] = x
    for n in g.node:
        i = [v[k] if k else None for k in n.input]
        t = n.op_type
        if t == "Conv":
            k = i[1].shape[2:]
            p = attr(n, "pads", [0, 0, 0, 0])
            y = conv(i[0], i[1], attr(n, "strides", [1, 1]), [p[0], p[1], p[2], p[3]],
                     attr(n, "dilations", [1, 1]), attr(n, "group", 1)).astype(np.float32)
            if len(i) > 2 and i[2] is not None:
                y += i[2].reshape(1, -1, 1, 1)
            del k
        elif t == "Relu":
            y = np.maximum(i[0], 0)
        elif t == "Clip":
            y = np.clip(i[0], i[1] if len(i) > 1 and i[1] is not None else -np.inf,
                        i[2] if len(i) > 2 and i[2] is not None else np.inf)
        elif t == "Add":
            y = i[0] + i[1]
        elif t == "MaxPool":
            kh, kw = attr(n, "kernel_shape", None)
            p = attr(n, "pads", [0, 0, 0, 0])
            cols, oh, ow = im2col(i[0], kh, kw, attr(n, "strides", [1, 1]), p, [1, 1], -np.inf)
            y = cols.max(axis=(4, 5)).transpose(0, 3, 1, 2)
        elif t == "GlobalAveragePool":
            y = i[0].mean(axis=(2, 3), keepdims=True)
        elif t == "Flatten":
            y = i[0].reshape(i[0].shape[0], -1)
        elif t == "Reshape":
            y = i[0].reshape(i[1])
        elif t == "Gemm":
            w = i[1].T if attr(n, "transB", 0) else i[1]
            y = i[0] @ w + (i[2] if len(i) > 2 else 0)
        elif t == "Constant":
            y = numpy_helper.to_array(attr(n, "value", None))
        else:
            sys.exit("qdq.py: float op %s not evaluated" % t)
        v[n.output[0]] = np.asarray(y, dtype=y.dtype if t == "Constant" else np.float32)
    return v


def uint8_qparams(lo, hi):
    """ONNX Runtime's asymmetric uint8 activations: the range holds 0"""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    s = np.float32((hi - lo) / 255.0) if hi > lo else np.float32(1.0)
    zp = np.uint8(np.clip(np.rint(-lo / s), 0, 255))
    return s, zp


def build(out, name):
    import onnx
    import torch
    from onnx import helper, numpy_helper, TensorProto
    sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "resnet18_onnx"))
    import export as ex
    torch.manual_seed(0)
    model = ex.MODELS[name][0]().eval()
    ex.reinit(model)
    gen = torch.Generator().manual_seed(2)
    xs = torch.randn((N, 3, H, H), generator=gen)
    ex.rescale_head(model, xs)
    calib = torch.randn((4, 3, H, H), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        yf = model(xs).numpy()
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    fpath = os.path.join(d, "float.onnx")
    torch.onnx.export(model, xs, fpath, opset_version=17, input_names=["x"], output_names=["y"],
                      do_constant_folding=True)
    fm = onnx.load(fpath)
    vals = float_eval(fm, calib.numpy())
    g = fm.graph
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    qinit, nodes, qp = [], [], {}

    def const(nm, arr):
        qinit.append(numpy_helper.from_array(np.asarray(arr), nm))
        return nm

    def act_q(t):
        """t's uint8 qparams (as initializers), calibrated"""
        if t not in qp:
            s, z = uint8_qparams(vals[t].min(), vals[t].max())
            qp[t] = (const(t + "_s", np.float32(s)), const(t + "_z", np.uint8(z)))
            sval[t + "_s"], zval[t + "_z"] = np.float32(s), int(z)
        return qp[t]

    def qdq(t, src=None):
        """Q then DQ of activation t (qparams of src when given): the DQ'd name"""
        s, z = act_q(src or t)
        qp[t] = (s, z)
        nodes.append(helper.make_node("QuantizeLinear", [t, s, z], [t + "_q"], name=t + "_Q"))
        nodes.append(helper.make_node("DequantizeLinear", [t + "_q", s, z], [t + "_dq"],
                                      name=t + "_DQ"))
        return t + "_dq"

    def weight(nm, w, axis):
        """int8 symmetric per-channel along axis: the DQ'd name, the scales"""
        red = tuple(k for k in range(w.ndim) if k != axis)
        amax = np.abs(w).max(axis=red)
        s = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
        shp = [1] * w.ndim
        shp[axis] = -1
        q = np.clip(np.rint(w / s.reshape(shp)), -127, 127).astype(np.int8)
        const(nm + "_q", q)
        const(nm + "_s", s)
        const(nm + "_z", np.zeros(s.shape, np.int8))
        nodes.append(helper.make_node("DequantizeLinear", [nm + "_q", nm + "_s", nm + "_z"],
                                      [nm + "_dq"], name=nm + "_DQ", axis=axis))
        return nm + "_dq", s

    def bias(nm, b, xs_name, ws):
        xs = sval[xs_name]
        bs = (np.float32(xs) * ws).astype(np.float32)
        q = np.rint(b / bs).astype(np.int32)
        const(nm + "_q", q)
        const(nm + "_s", bs)
        const(nm + "_z", np.zeros(bs.shape, np.int32))
        nodes.append(helper.make_node("DequantizeLinear", [nm + "_q", nm + "_s", nm + "_z"],
                                      [nm + "_dq"], name=nm + "_DQ", axis=0))
        return nm + "_dq"

    sval, zval = {}, {}
    # which float outputs go through a Relu/Clip (quantised after it)
    users = {}
    for n in g.node:
        for k in n.input:
            users.setdefault(k, []).append(n)
    dq = {}   # float value -> its DQ'd name
    x = g.input[0].name
    dq[x] = qdq(x)
    out_name = None
    for n in g.node:
        t = n.op_type
        o = n.output[0]
        ins = list(n.input)
        fused = t in ("Conv", "Add", "MatMul") and len(users.get(o, [])) == 1 and \
            users[o][0].op_type in ("Relu", "Clip")
        if t == "Constant":
            nodes.append(n)
            continue
        if t == "Conv":
            wdq, ws = weight(ins[1], inits[ins[1]], 0)
            xin = dq[ins[0]]
            xs_name = qp[ins[0]][0]
            new_in = [xin, wdq]
            if len(ins) > 2 and ins[2]:
                new_in.append(bias(ins[2], inits[ins[2]], xs_name, ws))
            nodes.append(helper.make_node("Conv", new_in, [o], name=n.name,
                                          **{a.name: helper.get_attribute_value(a)
                                             for a in n.attribute}))
        elif t == "Gemm":
            assert attr(n, "transB", 0) == 1 and attr(n, "alpha", 1.0) == 1.0
            wdq, _ = weight(ins[1] + "_t", inits[ins[1]].T.copy(), 1)
            nodes.append(helper.make_node("MatMul", [dq[ins[0]], wdq], [o + "_mm"],
                                          name=n.name + "_MatMul"))
            vals[o + "_mm"] = vals[ins[0]] @ inits[ins[1]].T
            mm = qdq(o + "_mm")
            b = inits[ins[2]]
            bsc = np.float32(max(np.abs(b).max(), 1e-6) / 127.0)
            # qlinear_add takes one dtype: the bias as uint8 around 128
            const(ins[2] + "_q", (np.clip(np.rint(b / bsc), -127, 127) + 128).astype(np.uint8))
            const(ins[2] + "_s", bsc)
            const(ins[2] + "_z", np.uint8(128))
            nodes.append(helper.make_node("DequantizeLinear",
                                          [ins[2] + "_q", ins[2] + "_s", ins[2] + "_z"],
                                          [ins[2] + "_dq"], name=ins[2] + "_DQ"))
            nodes.append(helper.make_node("Add", [mm, ins[2] + "_dq"], [o], name=n.name + "_Add"))
        elif t in ("Relu", "Clip"):
            nodes.append(helper.make_node(t, [ins[0]] + [k for k in ins[1:]], [o], name=n.name))
        else:
            nodes.append(helper.make_node(t, [dq[k] if k in dq else k for k in ins], [o],
                                          name=n.name,
                                          **{a.name: helper.get_attribute_value(a)
                                             for a in n.attribute}))
        if fused:
            continue   # quantised after its Relu/Clip
        same = t in ("MaxPool", "Flatten", "Reshape")
        if t in ("Relu", "Clip") and ins[0] not in dq:
            dq[o] = qdq(o)
        elif same:
            dq[o] = qdq(o, src=ins[0])
        else:
            dq[o] = qdq(o)
        if o == g.output[0].name:
            out_name = o
    # the output: the uint8 logits
    qs, qz = qp[out_name]
    graph = helper.make_graph(
        [nd for nd in nodes if nd.name != out_name + "_DQ"], name + "_qdq",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, 3, H, H])],
        [helper.make_tensor_value_info(out_name + "_q", TensorProto.UINT8, list(yf.shape))],
        qinit)
    qm = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(qm)
    onnx.save(qm, os.path.join(d, "model.onnx"))
    np.savez(os.path.join(d, "input.npz"), x=xs.numpy().astype(np.float32))
    np.savez(os.path.join(d, "float.npz"), y=yf.astype(np.float32))
    with open(os.path.join(d, "qout.txt"), "w") as f:
        f.write("%s %r %d\n" % (out_name + "_q", float(sval[qs]), zval[qz]))
    print("%s: %d nodes in the QDQ model" % (name, len(graph.node)))


# ---- ref: the imported spec with integer arithmetic ------------------------

RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int32": (-2**31, 2**31 - 1)}


def qround(v, zp, dt):
    """saturate(zp + rne(v)); NaN gives zp"""
    v = np.where(np.isnan(v), 0.0, v)
    lo, hi = RANGE[dt]
    return np.clip(np.rint(v) + np.float64(zp), lo, hi).astype(dt)


def f64(a):
    return np.asarray(a).astype(np.float64)


def ref(spec_path, weights_path, input_path, out_path):
    import yaml
    spec = yaml.safe_load(open(spec_path))
    w = dict(np.load(weights_path))
    v = dict(np.load(input_path))
    v.update(w)
    ops = [op for comp in spec["components"] for op in comp["ops"]]
    for op in ops:
        t, ins, at = op["op"], [v[k] for k in op["in"]], op.get("attrs", {}) or {}
        if t == "quantize_linear":
            s, z = ins[1], ins[2] if len(ins) > 2 else np.uint8(0)
            q = (np.asarray(ins[0], np.float32) / np.float32(s)).astype(np.float32)
            y = qround(f64(q), int(z), z.dtype.name)
        elif t == "dequantize_linear":
            y = (ins[0].astype(np.float32) - np.float32(ins[2])) * np.float32(ins[1])
        elif t == "qlinear_conv":
            x, xs, xz, wq, ws, wz, ys, yz = ins[:8]
            p = at.get("pads", [0, 0, 0, 0])
            acc = conv(x.astype(np.int64) - int(xz), wq.astype(np.int64) - wz.astype(np.int64)
                       .reshape(-1, 1, 1, 1) if np.ndim(wz) else wq.astype(np.int64) - int(wz),
                       at.get("strides", [1, 1]), p, at.get("dilations", [1, 1]),
                       at.get("group", 1), pad_value=0)
            if len(ins) > 8:
                acc = acc + f64(ins[8]).reshape(1, -1, 1, 1)
            m = (np.float32(xs) * np.asarray(ws, np.float32)).astype(np.float32)
            m = (m / np.float32(ys)).astype(np.float32)
            y = qround(acc * f64(m).reshape(1, -1, 1, 1) if m.ndim else acc * f64(m), int(yz),
                       yz.dtype.name)
        elif t == "qlinear_matmul":
            a, as_, az, b, bs, bz, ys, yz = ins
            acc = f64(a.astype(np.int64) - az.astype(np.int64)) @ \
                f64(b.astype(np.int64) - bz.astype(np.int64))
            m = ((np.float32(as_) * np.asarray(bs, np.float32)).astype(np.float32) /
                 np.float32(ys)).astype(np.float32)
            y = qround(acc * f64(m), int(yz), yz.dtype.name)
        elif t == "qlinear_add":
            a, as_, az, b, bs, bz, ys, yz = ins
            ma = (np.float32(as_) / np.float32(ys)).astype(np.float32)
            mb = (np.float32(bs) / np.float32(ys)).astype(np.float32)
            y = qround(f64(a.astype(np.int64) - int(az)) * f64(ma) +
                       f64(b.astype(np.int64) - int(bz)) * f64(mb), int(yz), yz.dtype.name)
        elif t == "qlinear_global_avgpool":
            x, xs, xz, ys, yz = ins
            s = (x.astype(np.int64) - int(xz)).sum(axis=(2, 3), keepdims=True)
            m = (np.float32(xs) / np.float32(ys)).astype(np.float32)
            y = qround((f64(s) * f64(m)) / np.float64(x.shape[2] * x.shape[3]), int(yz),
                       yz.dtype.name)
        elif t == "clip":
            lo, hi = RANGE[ins[0].dtype.name]
            mn, mx = float(at.get("min", -np.inf)), float(at.get("max", np.inf))
            L = lo if not np.isfinite(mn) else int(np.clip(np.ceil(mn), lo, hi))
            Hh = hi if not np.isfinite(mx) else int(np.clip(np.floor(mx), lo, hi))
            y = np.minimum(np.maximum(ins[0], L), Hh).astype(ins[0].dtype)
        elif t == "maxpool2d":
            kh, kw = at["kernel"]
            lo = RANGE[ins[0].dtype.name][0]
            cols, oh, ow = im2col(ins[0], kh, kw, at.get("strides", [kh, kw]),
                                  at.get("pads", [0, 0, 0, 0]), at.get("dilations", [1, 1]), lo)
            y = cols.max(axis=(4, 5)).transpose(0, 3, 1, 2)
        elif t == "flatten":
            ax = at.get("axis", 1)
            y = ins[0].reshape(int(np.prod(ins[0].shape[:ax])), -1)
        elif t == "reshape":
            shp = list(at["shape"])
            shp = [ins[0].shape[k] if d == 0 else d for k, d in enumerate(shp)]
            y = ins[0].reshape(shp)
        else:
            sys.exit("qdq.py ref: op %s is not in the NumPy reference" % t)
        v[op["out"] if isinstance(op["out"], str) else op["out"][0]] = y
    np.savez(out_path, **{k: v[k] for k in spec["outputs"]})


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "build":
        build(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 6 and sys.argv[1] == "ref":
        ref(*sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
