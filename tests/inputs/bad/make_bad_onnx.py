"""Regenerates the bad ONNX inputs in this folder (run with /usr/bin/python3, which has python3-onnx)."""
import os
import onnx
from onnx import TensorProto, helper

here = os.path.dirname(os.path.abspath(__file__))


def relu_model(opset, ir_version=8):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [10, 10])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [10, 10])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r0")], "g", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir_version
    return m


def write(name, data, expected):
    with open(os.path.join(here, name), "wb") as f:
        f.write(data)
    with open(os.path.join(here, name + ".expected"), "w") as f:
        f.write(expected + "\n")


good = relu_model(13).SerializeToString()
write("truncated.onnx", good[: len(good) // 2], "not a valid ONNX model (truncated or corrupt protobuf")
write("corrupt.onnx", b"\x08\x07\x12\xff\xff\xff\xff\x0fgarbage" * 4, "not a valid ONNX model (truncated or corrupt protobuf")
write("opset_too_new.onnx", relu_model(18).SerializeToString(), "opset_import: opset 18 is outside the supported range 7-17")
write("opset_too_old.onnx", relu_model(6).SerializeToString(), "opset_import: opset 6 is outside the supported range 7-17")
write("ir_too_new.onnx", relu_model(13, ir_version=9).SerializeToString(), "ir_version: IR version 9 is newer than tessera reads")
