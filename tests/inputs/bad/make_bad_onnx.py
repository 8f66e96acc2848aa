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


# Found by fuzzing (docs/fuzzing.md): absurd sizes, malformed external data, mistyped Constants.
def model_with(nodes, inits=(), inputs=None):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph(nodes, "g", [x] if inputs is None else inputs, [y], list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m.SerializeToString()


def constant_int_as_float():
    n = helper.make_node("Constant", [], ["c"], value_int=1)
    n.attribute[0].name = "value_float"   # an INT attribute under a FLOAT attribute's name
    return n


def external(name, dims, **kv):
    t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in kv.items():
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


write("huge_initializer.onnx",
      model_with([helper.make_node("Add", ["x", "w"], ["y"])], [external("w", [1 << 20, 1 << 20], location="w.bin")]),
      "initializer 'w': f32[1048576,1048576] has 1099511627776 elements, more than tessera's limit")
write("external_offset_not_a_number.onnx",
      model_with([helper.make_node("Add", ["x", "w"], ["y"])], [external("w", [4], location="w.bin", offset="12abc")]),
      "external data offset: '12abc' is not a byte count")
write("constant_value_float_int.onnx",
      model_with([constant_int_as_float(), helper.make_node("Add", ["x", "c"], ["y"])]),
      "Constant's attribute 'value_float' has the wrong type")
# protobuf does not check ONNX's strings: a node name that is not UTF-8 (same length, patched).
write("name_not_utf8.onnx",
      model_with([helper.make_node("Relu", ["x"], ["y"], name="rXXX")]).replace(b"rXXX", b"r\xff\xfe\x01"),
      "is not valid UTF-8")

# Found by fuzz_onnx (docs/fuzzing.md): a Conv weight of another rank than its input crashed ONNX's
# own shape inference (a null read in convPoolShapeInference).
import numpy as np  # noqa: E402
from onnx import numpy_helper  # noqa: E402
write("conv_weight_rank.onnx",
      model_with([helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1])],
                 [numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])]),
      "node 'conv' (Conv): weight 'w' has rank 4 but input 'x' has rank 2; they must be equal")
write("pool_stride_zero.onnx",
      model_with([helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[3, 3], strides=[0, 2])], [],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])]),
      "node 'pool' (MaxPool): strides 0 is outside [1, 2^31)")

# A convolution group of 0 passes ONNX's shape inference and divided by zero inside oneDNN and
# XNNPACK at run time (SIGFPE); a group that does not divide the channels is as wrong.
write("conv_group_zero.onnx",
      model_with([helper.make_node("Conv", ["x", "w"], ["y"], name="conv", group=0)],
                 [numpy_helper.from_array(np.ones((4, 4, 3, 3), np.float32), "w")],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])]),
      "node 'conv': Conv attribute group is 0; it must be at least 1")
write("conv_group_not_dividing.onnx",
      model_with([helper.make_node("Conv", ["x", "w"], ["y"], name="conv", group=3)],
                 [numpy_helper.from_array(np.ones((4, 4, 3, 3), np.float32), "w")],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])]),
      "node 'conv': Conv attribute group is 3; it must divide the input's 4 channels")

# Loop (docs/control_flow.md): what import refuses, naming the node.
def loop_body(nodes, inputs, outputs):
    return helper.make_graph(nodes, "body", inputs, outputs)


def loop_io(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


i_in, c_in = loop_io("i", TensorProto.INT64, []), loop_io("cond_in", TensorProto.BOOL, [])
c_out = helper.make_node("Identity", ["cond_in"], ["cond_out"])
trips = numpy_helper.from_array(np.array(3, np.int64), "trips")
write("loop_no_body.onnx",
      model_with([helper.make_node("Loop", ["trips", "", "x"], ["y"], name="loop")], [trips]),
      "node 'loop' (Loop): has no body graph")
write("loop_wrong_arity.onnx",
      model_with([helper.make_node("Loop", ["trips", "", "x"], ["y"], name="loop",
                                   body=loop_body([c_out], [i_in, c_in], [loop_io("cond_out", TensorProto.BOOL, [])]))],
                 [trips]),
      "node 'loop' (Loop): takes 3 inputs (trip count, condition, loop-carried values) but its body 2")
write("loop_carried_grows.onnx",
      model_with([helper.make_node("Loop", ["trips", "", "x"], ["y"], name="loop",
                                   body=loop_body([c_out, helper.make_node("Concat", ["v", "v"], ["v2"], axis=0)],
                                                  [i_in, c_in, loop_io("v", TensorProto.FLOAT, [4])],
                                                  [loop_io("cond_out", TensorProto.BOOL, []),
                                                   loop_io("v2", TensorProto.FLOAT, [8])]))],
                 [trips]),
      "node 'loop' (Loop): loop-carried value 0 enters the body as f32[4] and leaves it as f32[8]")
write("loop_scan_runtime_trips.onnx",
      model_with([helper.make_node("Loop", ["n", "", "x"], ["v_final", "y"], name="loop",
                                   body=loop_body([c_out, helper.make_node("Relu", ["v"], ["r"])],
                                                  [i_in, c_in, loop_io("v", TensorProto.FLOAT, [4])],
                                                  [loop_io("cond_out", TensorProto.BOOL, []),
                                                   loop_io("v", TensorProto.FLOAT, [4]),
                                                   loop_io("r", TensorProto.FLOAT, [4])]))], [],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
                  helper.make_tensor_value_info("n", TensorProto.INT64, [])]),
      "node 'loop' (Loop): scan output 'y' stacks one value per iteration, and its trip count 'n' is computed at run time")
write("scan_lengths_differ.onnx",
      model_with([helper.make_node("Scan", ["x", "z"], ["y"], name="scan", num_scan_inputs=2,
                                   body=loop_body([helper.make_node("Add", ["a", "b"], ["c"])],
                                                  [loop_io("a", TensorProto.FLOAT, []), loop_io("b", TensorProto.FLOAT, [])],
                                                  [loop_io("c", TensorProto.FLOAT, [])]))], [],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
                  helper.make_tensor_value_info("z", TensorProto.FLOAT, [3])]),
      "node 'scan' (Scan): scan inputs have different lengths (4 and 3)")
