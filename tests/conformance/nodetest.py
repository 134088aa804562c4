#!/usr/bin/python3
"""nodetest.py: the Python half of tests/conformance/nodetests.sh (ONNX's
node tests, from Debian's libonnx-testdata, through eulernpu import).

  nodetest.py prepare NODE_DIR WORK BACKENDS_JSON [TEST...]
      Classify every test under NODE_DIR (or those named): applicable when
      its graph's inputs and outputs are float32 tensors and every node that
      runs (a node with a runtime input; nodes whose inputs are all constant
      are folded by the importer) maps to spec ops that the daemon's
      GET /v1/backends answer (BACKENDS_JSON) lists for cpu_ref. Prints one
      tab-separated line per test: TEST, OP (the op the test is about),
      "applicable" or "na", and the reason of an "na"; an applicable one
      adds the number of data sets, the backends to run it on (cpu_ref, and
      npu_sim where the daemon says npu_sim lowers every op it needs) and
      how to compare with ONNX's outputs ("exact" for integer outputs: spec
      v3's quantised ops are integer-exact; else "tol").
      Integer tensors (int8, uint8, int32) are applicable where every node
      that runs maps to a spec v3 quantised op (QUANT). For an applicable
      test it writes WORK/TEST/model.onnx, whose inputs after the first are
      initializers (the test's own values: what an exported model holds as
      weights, and what Reshape's shape, Clip's bounds, Gather's indices and
      the like must be), and per data set K: input_K.npz (the first input)
      and expected_K.npz (the outputs), keyed by ONNX name.
  nodetest.py rekey ANSWER K DIR
      DIR/in_K.npz and DIR/exp_K.npz: DIR/input_K.npz and expected_K.npz
      with their arrays in order under the spec's input and output names
      (ANSWER: `eulernpu import --json`'s answer).
  nodetest.py table RESULTS
      RESULTS holds lines "TEST OP STATUS REASON" (STATUS pass, fail or
      na): prints the Markdown table of passed / failed / not applicable
      per op, with the reasons of the not applicable ones.
"""
import collections
import json
import os
import sys

import numpy as np

# ONNX op type -> the spec op it becomes, by the rank of its first input
# where that decides (None: the importer removes or folds it, no spec op).
RANKED = {
    "Conv": {3: "conv1d", 4: "conv2d"},
    "MaxPool": {3: "maxpool1d", 4: "maxpool2d"},
    "AveragePool": {3: "avgpool1d", 4: "avgpool2d"},
    "ConvTranspose": {4: "conv_transpose2d"},
    "Resize": {4: "resize"},
    "ConvInteger": {4: "conv_integer"},
    "QLinearConv": {4: "qlinear_conv"},
}
PLAIN = {
    "Abs": "abs", "Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div",
    "Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "LeakyRelu": "leaky_relu",
    "Clip": "clip", "Gelu": "gelu", "Softmax": "softmax", "GlobalAveragePool": "global_avgpool",
    "BatchNormalization": "batchnorm", "Reshape": "reshape", "Flatten": "flatten",
    "Transpose": "transpose", "Concat": "concat", "MatMul": "matmul", "Gemm": "gemm",
    "Exp": "exp", "Log": "log", "Sqrt": "sqrt", "Neg": "neg", "Reciprocal": "reciprocal",
    "Erf": "erf", "Pow": "pow", "Min": "min", "Max": "max", "HardSigmoid": "hard_sigmoid",
    "HardSwish": "hard_swish", "PRelu": "prelu", "Elu": "elu", "Softplus": "softplus",
    "ReduceMean": "reduce_mean", "ReduceSum": "reduce_sum", "ReduceMax": "reduce_max",
    "ReduceMin": "reduce_min", "LayerNormalization": "layer_norm", "Pad": "pad",
    "Slice": "slice", "Squeeze": "squeeze", "Unsqueeze": "unsqueeze", "Split": "split",
    "Gather": "gather", "Identity": None, "Dropout": None, "Constant": None,
    "QuantizeLinear": "quantize_linear", "DequantizeLinear": "dequantize_linear",
    "MatMulInteger": "matmul_integer", "QLinearMatMul": "qlinear_matmul",
}
# spec v3's quantised ops: they read and write int8, uint8 and int32
QUANT = {"quantize_linear", "dequantize_linear", "matmul_integer", "conv_integer",
         "qlinear_matmul", "qlinear_conv"}
TRAINING_DOMAIN = "ai.onnx.preview.training"


def snake(op):
    out = ""
    for i, c in enumerate(op):
        if c.isupper() and i and (not op[i - 1].isupper() or
                                  (i + 1 < len(op) and op[i + 1].islower())):
            out += "_"
        out += c.lower()
    return out


def test_op(test, nodes):
    """The op a test is about: the node op whose snake_case name is the
    longest prefix of the test's name; else the last node's."""
    name = test[len("test_"):]
    best = None
    for n in nodes:
        s = snake(n.op_type)
        if (name == s or name.startswith(s + "_")) and (best is None or len(s) > len(snake(best))):
            best = n.op_type
    return best or nodes[-1].op_type


def load_sets(d, onnx):
    from onnx import numpy_helper
    sets = []
    for s in sorted(x for x in os.listdir(d) if x.startswith("test_data_set_")):
        p = os.path.join(d, s)
        ins, outs = [], []
        for kind, lst in (("input", ins), ("output", outs)):
            k = 0
            while os.path.exists(os.path.join(p, "%s_%d.pb" % (kind, k))):
                t = onnx.TensorProto()
                with open(os.path.join(p, "%s_%d.pb" % (kind, k)), "rb") as f:
                    t.ParseFromString(f.read())
                lst.append(numpy_helper.to_array(t))
                k += 1
        sets.append((ins, outs))
    return sets


def classify(onnx, m, ops, sets):
    """(reason or None, model with inputs 1.. as initializers, the spec ops
    it needs)."""
    from onnx import numpy_helper
    g = m.graph
    for v in list(g.input) + list(g.output):
        if not v.type.HasField("tensor_type"):
            return "sequence, map or optional type", None, None
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx") and not 7 <= o.version <= 17:
            return "opset outside 7-17 (%d)" % o.version, None, None
    for v in list(g.input) + list(g.output):
        if any(d.HasField("dim_value") and d.dim_value == 0 for d in v.type.tensor_type.shape.dim):
            return "zero-size tensor (spec dims are >= 1)", None, None
    inits = {i.name for i in g.initializer}
    runtime = [v for v in g.input if v.name not in inits]
    if not runtime:
        return "no runtime input", None, None
    ints = (onnx.TensorProto.INT8, onnx.TensorProto.UINT8, onnx.TensorProto.INT32)
    nonfloat = None
    for v in [runtime[0]] + list(g.output):
        et = v.type.tensor_type.elem_type
        if et != onnx.TensorProto.FLOAT:
            nonfloat = nonfloat or "non-float dtype (%s)" % onnx.TensorProto.DataType.Name(et).lower()
            if et not in ints:
                return nonfloat, None, None
    if not sets or len(sets[0][0]) != len(runtime) or len(sets[0][1]) != len(g.output):
        return "test data do not match the graph", None, None
    # inputs 1.. become initializers with the first data set's values
    baked = onnx.ModelProto()
    baked.CopyFrom(m)
    bg = baked.graph
    keep = [runtime[0]]
    for v, a in zip(runtime[1:], sets[0][0][1:]):
        if not isinstance(a, np.ndarray):
            return "sequence, map or optional type", None, None
        bg.initializer.append(numpy_helper.from_array(a, v.name))
    del bg.input[:]
    bg.input.extend(keep)
    const = {i.name for i in bg.initializer} | {""}
    try:
        inferred = onnx.shape_inference.infer_shapes(baked)
        vi = {v.name: v for v in list(inferred.graph.value_info) + list(bg.input) + list(bg.output)}
    except Exception:   # noqa: BLE001: inference is a hint only
        vi = {}
    needed = set()
    for n in bg.node:
        if n.domain == TRAINING_DOMAIN:
            return "training op (%s)" % n.op_type, None, None
        if n.op_type == "BatchNormalization" and any(
                a.name == "training_mode" and a.i for a in n.attribute):
            return "training mode (BatchNormalization training_mode=1)", None, None
        if n.op_type == "Dropout" and len(n.input) > 2 and n.input[2]:
            return "training mode (Dropout training_mode input)", None, None
        if all(i in const for i in n.input):
            const.update(n.output)     # folded at import
            continue
        # integer graph inputs and outputs: only where quantised ops run
        if nonfloat and PLAIN.get(n.op_type, RANKED.get(n.op_type, {}).get(4)) not in QUANT:
            return nonfloat, None, None
        if n.op_type in RANKED:
            t = vi.get(n.input[0])
            r = len(t.type.tensor_type.shape.dim) if t is not None and \
                t.type.tensor_type.HasField("shape") else None
            spec = RANKED[n.op_type].get(r)
            if spec is None:
                return "%s of rank %s not in spec v2" % (n.op_type, r), None, None
        elif n.op_type in PLAIN:
            spec = PLAIN[n.op_type]
        else:
            return "op %s not in spec v2" % n.op_type, None, None
        if spec is not None and spec not in ops:
            return "op %s not in spec v2 (%s)" % (n.op_type, spec), None, None
        if spec is not None:
            needed.add(spec)
        for o in n.output:
            t = vi.get(o)
            if o and t is not None and t.type.tensor_type.elem_type not in (0, onnx.TensorProto.FLOAT) \
                    and not (spec in QUANT and t.type.tensor_type.elem_type in ints):
                return "non-float runtime tensor (%s of %s)" % (
                    onnx.TensorProto.DataType.Name(t.type.tensor_type.elem_type).lower(),
                    n.op_type), None, None
    if not needed:
        return "no spec op runs (%s removed at import)" % ", ".join(
            sorted({n.op_type for n in bg.node})), None, None
    # integer graph inputs and outputs: only where quantised ops run
    if nonfloat and not needed <= QUANT:
        return nonfloat, None, None
    return None, baked, needed


def prepare(node_dir, work, backends_json, only):
    import onnx
    with open(backends_json) as f:
        bk = json.load(f)
    ops = {o["op"] for o in bk["ops"] if o["backends"].get("cpu_ref")}
    npu_ops = {o["op"] for o in bk["ops"] if o["backends"].get("npu_sim")}
    tests = only or sorted(os.listdir(node_dir))
    for t in tests:
        d = os.path.join(node_dir, t)
        m = onnx.load(os.path.join(d, "model.onnx"), load_external_data=False)
        op = test_op(t, m.graph.node) if m.graph.node else "(none)"
        if any(not v.type.HasField("tensor_type") for v in list(m.graph.input) + list(m.graph.output)):
            print("%s\t%s\tna\t%s" % (t, op, "sequence, map or optional type"))
            continue
        try:
            sets = load_sets(d, onnx)
        except Exception as e:   # noqa: BLE001: a data set numpy cannot hold
            print("%s\t%s\tna\t%s" % (t, op, "test data not readable as arrays (%s)" % type(e).__name__))
            continue
        reason, baked, needed = classify(onnx, m, ops, sets)
        if reason:
            print("%s\t%s\tna\t%s" % (t, op, reason))
            continue
        out = os.path.join(work, t)
        os.makedirs(out, exist_ok=True)
        onnx.save(baked, os.path.join(out, "model.onnx"))
        for k, (ins, outs) in enumerate(sets):
            np.savez(os.path.join(out, "input_%d.npz" % k), **{baked.graph.input[0].name: ins[0]})
            np.savez(os.path.join(out, "expected_%d.npz" % k),
                     **{v.name: a for v, a in zip(baked.graph.output, outs)})
        ints = any(a.dtype != np.float32 for _, outs in sets for a in outs)
        print("%s\t%s\tapplicable\t%d\t%s\t%s" % (
            t, op, len(sets), "cpu_ref npu_sim" if needed <= npu_ops else "cpu_ref",
            "exact" if ints else "tol"))
    sys.stdout.flush()


def rekey(answer, k, d):
    """d/in_K.npz and d/exp_K.npz: d/input_K.npz and d/expected_K.npz with
    their arrays, in order, under the spec's names (the import's answer)."""
    with open(answer) as f:
        a = json.load(f)
    for src, dst, key in (("input", "in", "inputs"), ("expected", "exp", "outputs")):
        z = np.load(os.path.join(d, "%s_%s.npz" % (src, k)))
        names = [t["name"] for t in a[key]]
        if len(z.files) != len(names):
            sys.exit("rekey: %s_%s.npz holds %d arrays, the spec has %d %s" % (
                src, k, len(z.files), len(names), key))
        np.savez(os.path.join(d, "%s_%s.npz" % (dst, k)), **{n: z[f] for n, f in zip(names, z.files)})


def reasons(na):
    """The not-applicable reasons of one op, those that differ only in the
    detail in parentheses merged: ["3 non-float dtype (int8, uint8)", ...]."""
    cat = collections.OrderedDict()
    for why, c in sorted(na.items()):
        head, _, detail = why.partition(" (")
        e = cat.setdefault(head, [0, []])
        e[0] += c
        if detail and detail.rstrip(")") not in e[1]:
            e[1].append(detail.rstrip(")"))
    return ["%d %s%s" % (c, head, " (%s)" % ", ".join(d) if d else "")
            for head, (c, d) in cat.items()]


def table(results):
    per = collections.OrderedDict()
    with open(results) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3:
                continue
            _, op, status = parts[:3]
            reason = parts[3] if len(parts) > 3 else ""
            r = per.setdefault(op, {"pass": 0, "fail": 0, "na": collections.Counter()})
            if status == "na":
                r["na"][reason] += 1
            else:
                r[status] += 1
    print("| op | passed | failed | not applicable: count reason |")
    print("| --- | --- | --- | --- |")
    tot = [0, 0, 0]
    for op in sorted(per, key=str.lower):
        r = per[op]
        na = sum(r["na"].values())
        tot[0] += r["pass"]
        tot[1] += r["fail"]
        tot[2] += na
        why = "; ".join(reasons(r["na"]))
        print("| %s | %d | %d | %s |" % (op, r["pass"], r["fail"],
                                        why if na else "0"))
    print("| **all** | **%d** | **%d** | **%d** |" % tuple(tot))


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "prepare":
        prepare(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    elif len(sys.argv) == 5 and sys.argv[1] == "rekey":
        rekey(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 3 and sys.argv[1] == "table":
        table(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
