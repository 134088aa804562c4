#!/usr/bin/python3
"""Generate the small ONNX models tests/unit/test_import.c imports, with
their inputs and the outputs NumPy computes for them (float64 reference,
cast to float32). For each case NAME: NAME.onnx, NAME.in.npz (keys: the
spec's input names) and NAME.out.npz (keys: the graph's outputs, in
order). Deterministic: fixed seeds, fixed zip timestamps.

Run from anywhere: /usr/bin/python3 tests/data/onnx/gen.py
"""
import importlib.util
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT
I64 = TensorProto.INT64


def _ops_gen():
    """tests/data/ops/gen.py, for its savez (fixed zip timestamps)."""
    spec = importlib.util.spec_from_file_location("ops_gen", os.path.join(HERE, "..", "ops", "gen.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


savez = _ops_gen().savez


def rng(name):
    return np.random.default_rng(sum(ord(ch) * (k + 1) for k, ch in enumerate(name)))


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def model(name, nodes, inputs, outputs, inits, opset=13, save=True):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="gen.py")
    m.ir_version = 8
    if save:
        onnx.save(m, os.path.join(HERE, name + ".onnx"))
    return m


def io_files(name, ins, outs):
    savez(os.path.join(HERE, name + ".in.npz"), {k: v.astype(np.float32) for k, v in ins.items()})
    savez(os.path.join(HERE, name + ".out.npz"), {k: np.asarray(v, np.float32) for k, v in outs.items()})


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def conv2d(x, w, b, strides=(1, 1), pads=(0, 0, 0, 0)):
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    oh, ow = (h - kh) // strides[0] + 1, (wd - kw) // strides[1] + 1
    y = np.zeros((n, m, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * strides[0]:i * strides[0] + kh, j * strides[1]:j * strides[1] + kw]
            y[:, :, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3]))
    return y + (b.reshape(1, -1, 1, 1) if b is not None else 0)


def maxpool(x, k, s, pads):
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])), constant_values=-np.inf)
    oh, ow = (x.shape[2] - k) // s + 1, (x.shape[3] - k) // s + 1
    y = np.zeros(x.shape[:2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            y[:, :, i, j] = x[:, :, i * s:i * s + k, j * s:j * s + k].max(axis=(2, 3))
    return y


def mlp(name="mlp", external=False):
    r = rng("mlp")
    w1 = r.standard_normal((8, 16)).astype(np.float32) / 3
    b1 = r.standard_normal(16).astype(np.float32) / 5
    w2 = r.standard_normal((4, 16)).astype(np.float32) / 3
    b2 = r.standard_normal(4).astype(np.float32) / 5
    x = r.standard_normal((2, 8)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "fc1.weight"], ["/fc1/MatMul_output_0"], name="/fc1/MatMul"),
        helper.make_node("Add", ["/fc1/MatMul_output_0", "fc1.bias"], ["/fc1/Add_output_0"], name="/fc1/Add"),
        helper.make_node("Relu", ["/fc1/Add_output_0"], ["/act/Relu_output_0"], name="/act/Relu"),
        helper.make_node("Gemm", ["/act/Relu_output_0", "fc2.weight", "fc2.bias"], ["/head/fc2/Gemm_output_0"],
                         name="/head/fc2/Gemm", transB=1),
        helper.make_node("Softmax", ["/head/fc2/Gemm_output_0"], ["probs"], name="/head/Softmax", axis=-1),
    ]
    m = model(name, nodes, [helper.make_tensor_value_info("x", F, [2, 8])],
              [helper.make_tensor_value_info("probs", F, [2, 4])],
              [init("fc1.weight", w1), init("fc1.bias", b1), init("fc2.weight", w2), init("fc2.bias", b2)],
              save=not external)
    if external:
        data = os.path.join(HERE, name + ".data")
        if os.path.exists(data):
            os.remove(data)   # onnx appends to an existing file
        onnx.save_model(m, os.path.join(HERE, name + ".onnx"), save_as_external_data=True,
                        all_tensors_to_one_file=True, location=name + ".data", size_threshold=0)
    h = np.maximum(x.astype(np.float64) @ w1 + b1, 0)
    io_files(name, {"x": x}, {"probs": softmax(h @ w2.T.astype(np.float64) + b2, -1)})


def external_escape():
    """external.onnx with a location outside the model's directory."""
    m = onnx.load(os.path.join(HERE, "external.onnx"), load_external_data=False)
    for t in m.graph.initializer:
        for kv in t.external_data:
            if kv.key == "location":
                kv.value = "../onnx/external.data"
    onnx.save(m, os.path.join(HERE, "external_escape.onnx"))


def cnn():
    r = rng("cnn")
    x = r.standard_normal((1, 3, 8, 8)).astype(np.float32)
    w1 = (r.standard_normal((4, 3, 3, 3)) / 4).astype(np.float32)
    b1 = (r.standard_normal(4) / 4).astype(np.float32)
    sc, bi = (r.random(4) + 0.5).astype(np.float32), (r.standard_normal(4) / 4).astype(np.float32)
    mean, var = (r.standard_normal(4) / 4).astype(np.float32), (r.random(4) + 0.5).astype(np.float32)
    wf = (r.standard_normal((5, 4)) / 2).astype(np.float32)
    bf = (r.standard_normal(5) / 4).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "conv1.weight", "conv1.bias"], ["c1"], name="/features/conv1/Conv",
                         pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c1", "bn.s", "bn.b", "bn.m", "bn.v"], ["b1"],
                         name="/features/bn1/BatchNormalization", epsilon=1e-5),
        helper.make_node("Relu", ["b1"], ["r1"], name="/features/relu/Relu"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="/features/pool/MaxPool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p1"], ["g"], name="/head/gap/GlobalAveragePool"),
        helper.make_node("Flatten", ["g"], ["f"], name="/head/Flatten", axis=1),
        helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["logits"], name="/head/fc/Gemm", transB=1),
    ]
    model("cnn", nodes, [helper.make_tensor_value_info("x", F, [1, 3, 8, 8])],
          [helper.make_tensor_value_info("logits", F, [1, 5])],
          [init("conv1.weight", w1), init("conv1.bias", b1), init("bn.s", sc), init("bn.b", bi),
           init("bn.m", mean), init("bn.v", var), init("fc.weight", wf), init("fc.bias", bf)])
    c1 = conv2d(x.astype(np.float64), w1, b1, pads=(1, 1, 1, 1))
    b = (c1 - mean.reshape(1, -1, 1, 1)) / np.sqrt(var.reshape(1, -1, 1, 1) + 1e-5) * \
        sc.reshape(1, -1, 1, 1) + bi.reshape(1, -1, 1, 1)
    p = maxpool(np.maximum(b, 0), 2, 2, (0, 0, 0, 0))
    io_files("cnn", {"x": x}, {"logits": p.mean(axis=(2, 3)) @ wf.T + bf})


def autopad():
    """auto_pad SAME_UPPER (stride 2), SAME_LOWER (even kernel), VALID, and
    a SAME_UPPER MaxPool; pads computed as ONNX defines them."""
    r = rng("autopad")
    x = r.standard_normal((1, 2, 7, 7)).astype(np.float32)
    wa = (r.standard_normal((3, 2, 3, 3)) / 3).astype(np.float32)
    wb = (r.standard_normal((3, 2, 2, 2)) / 3).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "wa"], ["up"], name="up", auto_pad="SAME_UPPER", strides=[2, 2]),
        helper.make_node("Conv", ["x", "wb"], ["low"], name="low", auto_pad="SAME_LOWER"),
        helper.make_node("Conv", ["x", "wa"], ["valid"], name="valid", auto_pad="VALID"),
        helper.make_node("MaxPool", ["x"], ["pool"], name="pool", auto_pad="SAME_UPPER",
                         kernel_shape=[3, 3], strides=[2, 2]),
    ]
    model("autopad", nodes, [helper.make_tensor_value_info("x", F, [1, 2, 7, 7])],
          [helper.make_tensor_value_info(n, F, None) for n in ("up", "low", "valid", "pool")],
          [init("wa", wa), init("wb", wb)])
    xd = x.astype(np.float64)
    # SAME_UPPER, 7 in, stride 2, k 3: out 4, total pad 2 -> 1, 1
    # SAME_LOWER, k 2, stride 1: total pad 1 -> begin 1, end 0
    io_files("autopad", {"x": x}, {
        "up": conv2d(xd, wa, None, (2, 2), (1, 1, 1, 1)),
        "low": conv2d(xd, wb, None, (1, 1), (1, 1, 0, 0)),
        "valid": conv2d(xd, wa, None),
        "pool": maxpool(xd, 3, 2, (1, 1, 1, 1)),
    })


def torch_reshape():
    """PyTorch's x.view(x.size(0), -1): Shape -> Gather -> Unsqueeze ->
    Concat -> Reshape on a symbolic batch, then a MatMul."""
    r = rng("torch_reshape")
    w = (r.standard_normal((16, 3)) / 4).astype(np.float32)
    nodes = [
        helper.make_node("Shape", ["x"], ["/Shape_output_0"], name="/Shape"),
        helper.make_node("Constant", [], ["/Constant_output_0"], name="/Constant",
                         value=helper.make_tensor("c0", I64, [], [0])),
        helper.make_node("Gather", ["/Shape_output_0", "/Constant_output_0"], ["/Gather_output_0"],
                         name="/Gather", axis=0),
        helper.make_node("Constant", [], ["/Constant_1_output_0"], name="/Constant_1",
                         value=helper.make_tensor("c1", I64, [1], [0])),
        helper.make_node("Unsqueeze", ["/Gather_output_0", "/Constant_1_output_0"], ["/Unsqueeze_output_0"],
                         name="/Unsqueeze"),
        helper.make_node("Constant", [], ["/Constant_2_output_0"], name="/Constant_2",
                         value=helper.make_tensor("c2", I64, [1], [-1])),
        helper.make_node("Concat", ["/Unsqueeze_output_0", "/Constant_2_output_0"], ["/Concat_output_0"],
                         name="/Concat", axis=0),
        helper.make_node("Reshape", ["x", "/Concat_output_0"], ["/Reshape_output_0"], name="/Reshape"),
        helper.make_node("MatMul", ["/Reshape_output_0", "fc.w"], ["y"], name="/fc/MatMul"),
    ]
    model("torch_reshape", nodes, [helper.make_tensor_value_info("x", F, ["batch", 4, 2, 2])],
          [helper.make_tensor_value_info("y", F, ["batch", 3])], [init("fc.w", w)])
    for name, b in (("torch_reshape", 3), ("torch_reshape_b1", 1)):
        x = r.standard_normal((b, 4, 2, 2)).astype(np.float32)
        io_files(name, {"x": x}, {"y": x.reshape(b, -1).astype(np.float64) @ w})


def cls_token():
    """A class token Expand-ed to the batch and concatenated in front of the
    sequence, plus ConstantOfShape, Range, Cast, Equal and Where on
    constants: all of it folds; only concat, add, add, mul remain."""
    r = rng("cls_token")
    cls = r.standard_normal((1, 1, 8)).astype(np.float32)
    k = lambda n, v: helper.make_node("Constant", [], [n], name=n,
                                      value=helper.make_tensor(n, I64, [len(v)], v))
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="/Shape"),
        k("zero", [0]), k("one", [1]), k("d", [8]),
        helper.make_node("Gather", ["s", "zero"], ["b"], name="/Gather", axis=0),
        helper.make_node("Concat", ["b", "one", "d"], ["es"], name="/Concat", axis=0),
        helper.make_node("Expand", ["cls_token", "es"], ["ce"], name="/Expand"),
        helper.make_node("Concat", ["ce", "x"], ["z"], name="/enc/Concat_1", axis=1),
        helper.make_node("Shape", ["z"], ["zs"], name="/enc/Shape_1"),
        helper.make_node("ConstantOfShape", ["zs"], ["half"], name="/enc/ConstantOfShape",
                         value=helper.make_tensor("v", F, [1], [0.5])),
        helper.make_node("Add", ["z", "half"], ["z1"], name="/enc/Add"),
        helper.make_node("Constant", [], ["st"], name="st", value=helper.make_tensor("st", I64, [], [0])),
        helper.make_node("Constant", [], ["li"], name="li", value=helper.make_tensor("li", I64, [], [5])),
        helper.make_node("Constant", [], ["de"], name="de", value=helper.make_tensor("de", I64, [], [1])),
        helper.make_node("Range", ["st", "li", "de"], ["rg"], name="/pos/Range"),
        helper.make_node("Cast", ["rg"], ["rgf"], name="/pos/Cast", to=F),
        helper.make_node("Unsqueeze", ["rgf", "one"], ["rgu"], name="/pos/Unsqueeze"),
        helper.make_node("Add", ["z1", "rgu"], ["z2"], name="/enc/Add_1"),
        helper.make_node("Constant", [], ["two"], name="two", value=helper.make_tensor("two", I64, [], [2])),
        helper.make_node("Equal", ["rg", "two"], ["eq"], name="/mask/Equal"),
        helper.make_node("Constant", [], ["fa"], name="fa", value=helper.make_tensor("fa", F, [], [3.0])),
        helper.make_node("Constant", [], ["fb"], name="fb", value=helper.make_tensor("fb", F, [], [1.0])),
        helper.make_node("Where", ["eq", "fa", "fb"], ["wm"], name="/mask/Where"),
        helper.make_node("Unsqueeze", ["wm", "one"], ["wmu"], name="/mask/Unsqueeze"),
        helper.make_node("Mul", ["z2", "wmu"], ["y"], name="/enc/Mul"),
    ]
    model("cls_token", nodes, [helper.make_tensor_value_info("x", F, ["batch", 4, 8])],
          [helper.make_tensor_value_info("y", F, ["batch", 5, 8])], [init("cls_token", cls)])
    x = r.standard_normal((2, 4, 8)).astype(np.float32)
    z = np.concatenate([np.broadcast_to(cls, (2, 1, 8)), x], axis=1).astype(np.float64) + 0.5
    z = z + np.arange(5).reshape(5, 1)
    io_files("cls_token", {"x": x}, {"y": z * np.where(np.arange(5) == 2, 3.0, 1.0).reshape(5, 1)})


def softmax_opsets():
    """Softmax axis=1 on (2, 3, 4): opset 11 coerces to (2, 12), opset 13
    takes axis 1 alone."""
    x = rng("softmax").standard_normal((2, 3, 4)).astype(np.float32)
    for opset in (11, 13):
        name = "softmax%d" % opset
        model(name, [helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=1)],
              [helper.make_tensor_value_info("x", F, [2, 3, 4])],
              [helper.make_tensor_value_info("y", F, [2, 3, 4])], [], opset=opset)
        xd = x.astype(np.float64)
        y = softmax(xd.reshape(2, 12), 1).reshape(2, 3, 4) if opset == 11 else softmax(xd, 1)
        io_files(name, {"x": x}, {"y": y})


def names():
    """Names the spec rule refuses (':' and other characters), a node name
    used twice, a numeric value name, and scopes that come back (A, B, A)."""
    r = rng("names")
    w = (r.standard_normal((4, 4)) / 2).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["input:0", "onnx::MatMul_5"], ["1"], name="/enc/layer:0/MatMul"),
        helper.make_node("Relu", ["1"], ["2"], name="/enc/layer:0/MatMul"),
        helper.make_node("Tanh", ["2"], ["3"], name="/dec/blk/Tanh"),
        helper.make_node("Sigmoid", ["3"], ["out put"], name="/enc/layer:0/Sigmoid"),
    ]
    model("names", nodes, [helper.make_tensor_value_info("input:0", F, [1, 4])],
          [helper.make_tensor_value_info("out put", F, [1, 4])], [init("onnx::MatMul_5", w)])
    x = r.standard_normal((1, 4)).astype(np.float32)
    y = 1 / (1 + np.exp(-np.tanh(np.maximum(x.astype(np.float64) @ w, 0))))
    io_files("names", {"input_0": x}, {"out_put": y})


def misc11():
    """Opset 11: Clip bounds as constant inputs, Reshape by a constant,
    Transpose, Sum (3 inputs), Mean (2), LeakyRelu, Identity, Dropout,
    Softmax on the last axis."""
    r = rng("misc11")
    x = r.standard_normal((2, 6)).astype(np.float32)
    c = lambda n, v: helper.make_node("Constant", [], [n], name=n, value=numpy_helper.from_array(np.asarray(v), n))
    nodes = [
        c("lo", np.float32(-0.5)), c("hi", np.float32(0.75)), c("shp", np.array([2, 3, 2], np.int64)),
        helper.make_node("Clip", ["x", "lo", "hi"], ["cl"], name="/Clip"),
        helper.make_node("Reshape", ["cl", "shp"], ["rs"], name="/Reshape"),
        helper.make_node("Transpose", ["rs"], ["tr"], name="/Transpose", perm=[0, 2, 1]),
        helper.make_node("Identity", ["tr"], ["id"], name="/Identity"),
        helper.make_node("Dropout", ["id"], ["dr"], name="/Dropout"),
        helper.make_node("Sum", ["dr", "dr", "bias"], ["sm"], name="/Sum"),
        helper.make_node("Mean", ["sm", "dr"], ["mn"], name="/Mean"),
        helper.make_node("LeakyRelu", ["mn"], ["lr"], name="/LeakyRelu", alpha=0.1),
        helper.make_node("Softmax", ["lr"], ["y"], name="/Softmax", axis=2),
    ]
    bias = (r.standard_normal((2, 3)) / 2).astype(np.float32)
    model("misc11", nodes, [helper.make_tensor_value_info("x", F, [2, 6])],
          [helper.make_tensor_value_info("y", F, [2, 2, 3])], [init("bias", bias)], opset=11)
    t = np.clip(x.astype(np.float64), -0.5, 0.75).reshape(2, 3, 2).transpose(0, 2, 1)
    mn = ((t + t + bias) + t) / 2
    io_files("misc11", {"x": x}, {"y": softmax(np.where(mn > 0, mn, 0.1 * mn), 2)})


def unmappable():
    """Nodes the importer cannot map, of several kinds: every one is listed."""
    nodes = [
        helper.make_node("TopK", ["x", "k"], ["v", "i"], name="topk_node", axis=1),
        helper.make_node("Foo", ["x"], ["f"], name="custom_node", domain="com.example"),
        helper.make_node("NonZero", ["x"], ["nz"], name="nonzero_node"),
        helper.make_node("Relu", ["x"], ["ok"], name="fine_node"),
        helper.make_node("Relu", ["v"], ["after"], name="after_topk"),   # not listed again
        helper.make_node("Gemm", ["x", "w54"], ["g"], name="bad_gemm"),    # inner dims differ
        helper.make_node("MatMul", ["g", "w54"], ["after_g"], name="after_gemm"),  # not listed again
        helper.make_node("Clip", ["x", "x", "x"], ["cl"], name="clip_node"),  # bounds at run time: once
        helper.make_node("Dropout", ["x", "ratio", "train"], ["dr"], name="dropout_train"),
    ]
    for k in range(12):
        nodes.append(helper.make_node("Hardmax", ["x"], ["h%d" % k], name="hardmax_%d" % k))
    g = helper.make_graph(nodes, "unmappable", [helper.make_tensor_value_info("x", F, [2, 3])],
                          [helper.make_tensor_value_info("ok", F, [2, 3])] +
                          [helper.make_tensor_value_info(n, F, None) for n in ("after", "f", "nz", "after_g", "cl", "dr")],
                          [init("k", np.array([1], np.int64)), init("w54", np.ones((5, 4), np.float32)),
                           init("ratio", np.array(0.5, np.float32)), init("train", np.array(True))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)],
                          producer_name="gen.py")
    m.ir_version = 8
    onnx.save(m, os.path.join(HERE, "unmappable.onnx"))


def big_constant():
    """ConstantOfShape of 1e12 elements: an error, not an allocation."""
    nodes = [
        helper.make_node("Constant", [], ["s"], name="s", value=helper.make_tensor("s", I64, [2], [1000000, 1000000])),
        helper.make_node("ConstantOfShape", ["s"], ["big"], name="/huge/ConstantOfShape"),
        helper.make_node("Add", ["x", "big"], ["y"], name="/Add"),
    ]
    model("big_constant", nodes, [helper.make_tensor_value_info("x", F, [1, 1])],
          [helper.make_tensor_value_info("y", F, None)], [])


def zero_dim():
    """A graph input with a fixed dim of 0: E0404 naming it."""
    model("zero_dim", [helper.make_node("Relu", ["x"], ["y"], name="r")],
          [helper.make_tensor_value_info("x", F, [2, 0])], [helper.make_tensor_value_info("y", F, [2, 0])], [])


def two_inputs():
    """Two inputs sharing the symbolic dim 'batch': binding one binds both."""
    vi = lambda n: helper.make_tensor_value_info(n, F, ["batch", 3])
    model("two_inputs", [helper.make_node("Add", ["a", "b"], ["y"], name="add")], [vi("a"), vi("b")],
          [vi("y")], [])
    r = rng("two_inputs")
    a, b = r.standard_normal((4, 3)).astype(np.float32), r.standard_normal((4, 3)).astype(np.float32)
    io_files("two_inputs", {"a": a, "b": b}, {"y": a.astype(np.float64) + b})


def fold_float():
    """Float nodes on constants fold through the spec kernels: Sqrt and Exp
    of an initializer become weights; only mul and add remain."""
    c = np.array([2.0, 3.0, 5.0], np.float32)
    nodes = [
        helper.make_node("Sqrt", ["c"], ["s"], name="/Sqrt"),
        helper.make_node("Exp", ["c"], ["e"], name="/Exp"),
        helper.make_node("Mul", ["x", "s"], ["xs"], name="/Mul"),
        helper.make_node("Add", ["xs", "e"], ["y"], name="/Add"),
    ]
    vi = lambda n: helper.make_tensor_value_info(n, F, [2, 3])
    model("fold_float", nodes, [vi("x")], [vi("y")], [init("c", c)])
    x = rng("fold_float").standard_normal((2, 3)).astype(np.float32)
    io_files("fold_float", {"x": x}, {"y": x.astype(np.float64) * np.sqrt(c.astype(np.float64)) + np.exp(c.astype(np.float64))})


def aliases():
    """Graph outputs that are other values: an Identity at the end (twice
    on one value) and a graph input; each keeps its ONNX name."""
    x = rng("aliases").standard_normal((2, 3)).astype(np.float32)
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="/act/Relu"),
        helper.make_node("Identity", ["r"], ["y"], name="/Identity"),
        helper.make_node("Identity", ["r"], ["z"], name="/Identity_1"),
    ]
    vi = lambda n: helper.make_tensor_value_info(n, F, [2, 3])
    model("aliases", nodes, [vi("x")], [vi("r"), vi("y"), vi("z"), vi("x")], [])
    r = np.maximum(x, 0)
    io_files("aliases", {"x": x}, {"r": r, "y": r, "z": r, "x": x})


def gather():
    """Gather with 2-D int64 indices (negative, repeated, not a progression)
    on axis 1 and int32 indices on axis 0: spec gathers, the indices int64
    weights."""
    x = rng("gather").standard_normal((3, 4)).astype(np.float32)
    i64 = np.array([[3, 0], [-1, 1], [2, 2]], np.int64)
    i32 = np.array([2, 0], np.int32)
    nodes = [
        helper.make_node("Gather", ["x", "i64"], ["g"], name="/Gather", axis=1),
        helper.make_node("Gather", ["g", "i32"], ["y"], name="/Gather_1", axis=0),
    ]
    model("gather", nodes, [helper.make_tensor_value_info("x", F, [3, 4])],
          [helper.make_tensor_value_info("y", F, [2, 3, 2])],
          [numpy_helper.from_array(i64, "i64"), numpy_helper.from_array(i32, "i32")])
    io_files("gather", {"x": x}, {"y": np.take(np.take(x, i64, axis=1), i32, axis=0)})



def quant():
    """QuantizeLinear (int8 zero point), QLinearMatMul (int8 weights, b's
    scale per column) and DequantizeLinear: spec v3's quantized ops, the
    int8 initializers int8 weights; the reference is ONNX's definition in
    NumPy (docs/spec-format.md's requantisation: M = fl32(fl32(sa*sb)/sy),
    rne of the float64 product), so the result is exact."""
    f32 = np.float32
    x = (rng("quant").standard_normal((3, 8)) * 2).astype(f32)
    xs, xz = f32(0.05), np.int8(3)
    b = rng("quant_b").integers(-128, 128, (8, 4)).astype(np.int8)
    bs = np.array([0.01, 0.02, 0.005, 0.03], f32)
    bz = np.zeros(4, np.int8)
    ys, yz = f32(0.1), np.int8(-2)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="/q/QuantizeLinear"),
        helper.make_node("QLinearMatMul", ["xq", "xs", "xz", "b", "bs", "bz", "ys", "yz"], ["yq"],
                         name="/fc/QLinearMatMul"),
        helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"], name="/dq/DequantizeLinear"),
    ]
    model("quant", nodes, [helper.make_tensor_value_info("x", F, [3, 8])],
          [helper.make_tensor_value_info("y", F, [3, 4])],
          [init("xs", xs), init("xz", xz), init("b", b), init("bs", bs), init("bz", bz),
           init("ys", ys), init("yz", yz)])
    xq = np.clip(np.rint(x / xs).astype(np.int64) + int(xz), -128, 127)
    acc = np.matmul(xq - int(xz), b.astype(np.int64) - bz.astype(np.int64))
    m = (xs * bs) / ys
    yq = np.clip(np.rint(acc.astype(np.float64) * m.astype(np.float64)).astype(np.int64) + int(yz),
                 -128, 127)
    io_files("quant", {"x": x}, {"y": (yq.astype(f32) - f32(yz)) * ys})


if __name__ == "__main__":
    mlp()
    mlp("external", external=True)
    external_escape()
    cnn()
    autopad()
    torch_reshape()
    cls_token()
    softmax_opsets()
    names()
    misc11()
    unmappable()
    big_constant()
    aliases()
    zero_dim()
    two_inputs()
    fold_float()
    gather()
    quant()
