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
