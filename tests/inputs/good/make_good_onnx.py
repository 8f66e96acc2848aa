"""Regenerates the small ONNX inputs in this folder (run with /usr/bin/python3)."""
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))

# A Conv whose input has symbolic batch and spatial dimensions.
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, "h", "w"])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4, "h", "w"])
w = numpy_helper.from_array(np.arange(4 * 3 * 9, dtype=np.float32).reshape(4, 3, 3, 3) / 100.0, "w")
conv = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1])
g = helper.make_graph([conv], "symbolic", [x], [y], initializer=[w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, os.path.join(here, "symbolic.onnx"))

# A node output folded at import after a node that stays: Size(c) is a constant, numbered after c
# in the file's order but listed before it in the JSON form (found by fuzz_onnx: the JSON round
# trip renumbered the values, docs/fuzzing.md).
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
c = helper.make_tensor_value_info("c", TensorProto.FLOAT, [1, 4, 8, 8])
n = helper.make_tensor_value_info("n", TensorProto.INT64, [])
conv = helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1])
size = helper.make_node("Size", ["c"], ["n"], name="size")
g = helper.make_graph([conv, size], "folded_after_node", [x], [c, n], initializer=[w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, os.path.join(here, "folded_after_node.onnx"))

# Every simplify_graph pass (src/frontend/simplify.cc) in one graph, with real weights:
# Conv -> Identity -> BatchNormalization -> Relu -> Transpose pair -> Dropout -> grouped
# ConvTranspose -> Add(per-channel bias) -> BatchNormalization -> Reshape to the same shape ->
# Identity writing the graph output "y".
rng = np.random.default_rng(7)
def const(name, *shape, positive=False):
    a = rng.standard_normal(shape).astype(np.float32)
    return numpy_helper.from_array(np.abs(a) + 0.5 if positive else a, name)
inits = [const("w1", 4, 3, 3, 3), const("b1", 4),
         const("s1", 4), const("o1", 4), const("m1", 4), const("v1", 4, positive=True),
         const("w2", 4, 3, 2, 2), const("c2", 1, 6, 1, 1),
         const("s2", 6), const("o2", 6), const("m2", 6), const("v2", 6, positive=True),
         numpy_helper.from_array(np.array([1, 6, 10, 10], dtype=np.int64), "shape")]
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
    helper.make_node("Identity", ["c1"], ["c1i"], name="id1"),
    helper.make_node("BatchNormalization", ["c1i", "s1", "o1", "m1", "v1"], ["bn1"], name="bn1", epsilon=1e-3),
    helper.make_node("Relu", ["bn1"], ["r1"], name="relu1"),
    helper.make_node("Transpose", ["r1"], ["t1"], name="to_nhwc", perm=[0, 2, 3, 1]),
    helper.make_node("Transpose", ["t1"], ["t2"], name="to_nchw", perm=[0, 3, 1, 2]),
    helper.make_node("Dropout", ["t2"], ["d1"], name="drop"),
    helper.make_node("ConvTranspose", ["d1", "w2"], ["ct"], name="deconv", group=2, strides=[2, 2]),
    helper.make_node("Add", ["ct", "c2"], ["ctb"], name="bias"),
    helper.make_node("BatchNormalization", ["ctb", "s2", "o2", "m2", "v2"], ["bn2"], name="bn2"),
    helper.make_node("Reshape", ["bn2", "shape"], ["rs"], name="same_shape"),
    helper.make_node("Identity", ["rs"], ["y"], name="id_out"),
]
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 5, 5])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6, 10, 10])
g = helper.make_graph(nodes, "simplifiable", [x], [y], initializer=inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, os.path.join(here, "simplifiable.onnx"))

# A torch export with the Identity nodes torch 1.13 writes for equal weights (two convolutions
# initialised alike share one initializer through an Identity), and the same file with those
# Identity nodes stripped by hand: both must partition alike.
import torch

class Twins(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = torch.nn.ModuleList(torch.nn.Conv2d(8, 8, 3, padding=1) for _ in range(4))
        for c in self.convs:
            torch.nn.init.constant_(c.weight, 0.01)
            torch.nn.init.constant_(c.bias, 0.1)

    def forward(self, x):
        for c in self.convs:
            x = torch.relu(c(x))
        return x

path = os.path.join(here, "torch_identity.onnx")
torch.onnx.export(Twins().eval(), torch.zeros(1, 8, 16, 16), path, input_names=["x"], output_names=["y"],
                  opset_version=13)
m = onnx.load(path)
assert any(n.op_type == "Identity" for n in m.graph.node), "torch wrote no Identity nodes"
alias = {n.output[0]: n.input[0] for n in m.graph.node if n.op_type == "Identity"}
kept = [n for n in m.graph.node if n.op_type != "Identity"]
for n in kept:
    n.input[:] = [alias.get(i, i) for i in n.input]
del m.graph.node[:]
m.graph.node.extend(kept)
onnx.checker.check_model(m)
onnx.save(m, os.path.join(here, "torch_identity_stripped.onnx"))
