"""Regenerates the bad quantized ONNX inputs in this folder (quant_*.onnx; run with /usr/bin/python3).

Each is a small QuantizeLinear -> DequantizeLinear or QLinearConv model with one quantization
parameter that cannot be right; the importer refuses it with one line (src/frontend/quant_check.h).
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))


def write(name, model, expected):
    model.ir_version = 8
    with open(os.path.join(here, name), "wb") as f:
        f.write(model.SerializeToString())
    with open(os.path.join(here, name + ".expected"), "w") as f:
        f.write(expected + "\n")


def qdq_model(scale, zero_point, axis=1):
    """x [1, 3, 4, 4] -> QuantizeLinear(scale, zero_point, axis) -> DequantizeLinear -> y."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 4, 4])
    inits = [numpy_helper.from_array(np.asarray(scale, np.float32), "s"),
             numpy_helper.from_array(np.asarray(zero_point), "zp")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], name="quant", axis=axis),
             helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y"], name="dequant", axis=axis)]
    g = helper.make_graph(nodes, "g", [x], [y], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


write("quant_zero_scale.onnx", qdq_model(0.0, np.uint8(128)),
      "node 'quant' (QuantizeLinear): scale 's' is 0.000000; scales must be positive and finite")
write("quant_negative_scale.onnx", qdq_model([0.5, -0.25, 0.5], np.zeros(3, np.int8)),
      "node 'quant' (QuantizeLinear): scale 's' is -0.250000 at index 1; scales must be positive and finite")
write("quant_axis_length.onnx", qdq_model([0.5, 0.25], np.zeros(2, np.uint8)),
      "node 'quant' (QuantizeLinear): scale 's' is f32[2], expected a scalar or 3 values (one per channel)")
write("quant_zero_point_length.onnx", qdq_model([0.5, 0.25, 0.5], np.zeros(1, np.uint8)),
      "node 'quant' (QuantizeLinear): zero point 'zp' is u8[1] but scale 's' is f32[3]; they must have the same length")


def qlinear_conv_model(w_zero_point):
    """QLinearConv over uint8 x [1, 2, 5, 5] with a 3x2x3x3 int8 weight whose zero point is given."""
    x = helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 2, 5, 5])
    y = helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 3, 3, 3])
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(np.float32(0.1), "x_scale"), numpy_helper.from_array(np.uint8(128), "x_zp"),
             numpy_helper.from_array(rng.integers(-100, 100, (3, 2, 3, 3)).astype(np.int8), "w"),
             numpy_helper.from_array(np.full(3, 0.02, np.float32), "w_scale"),
             numpy_helper.from_array(w_zero_point, "w_zp"),
             numpy_helper.from_array(np.float32(0.2), "y_scale"), numpy_helper.from_array(np.uint8(120), "y_zp")]
    node = helper.make_node("QLinearConv", ["x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp"], ["y"],
                            name="qconv")
    g = helper.make_graph([node], "g", [x], [y], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


write("quant_zero_point_dtype.onnx", qlinear_conv_model(np.zeros(3, np.uint8)),
      "node 'qconv' (QLinearConv): shape inference: [TypeInferenceError] weight and zero_point pair is expected to have "
      "same type")
write("quant_zero_point_channels.onnx", qlinear_conv_model(np.zeros(2, np.int8)),
      "node 'qconv' (QLinearConv): zero point 'w_zp' is i8[2], expected a scalar or 3 values (one per channel)")
