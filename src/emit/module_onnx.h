// module.onnx: the partitioned model as ONNX, one local function per outlined function.
//
//   graph main:  initializers w0, w1 (the weights, when the model has their data)
//                n0: onednn.tvmgen_default_onednn_main_0(x, w0, b0)    <- one call per use
//                n1: onednn.tvmgen_default_onednn_main_0(r, w1, b1)
//   functions:   onednn.tvmgen_default_onednn_main_0(x, w, b) { Conv; Relu }
//
// Each function is a FunctionProto whose domain is its backend (the call's domain; an extern
// stub keeps its body here, so the file stays a complete, viewable model) and whose name is its
// symbol. Function constants become Constant nodes (FunctionProto has no initializers; a
// shape-only one becomes zeros). The Module's attributes, and each Composite, go into doc_string
// (NodeProto/FunctionProto carry no free-form attributes that onnx.checker would accept).
// Local functions need IR version >= 8 and an opset import per domain used, model-wide and per
// function (version 1 for backend domains). Weights without data (a clean clone) become graph
// inputs, as graph_to_onnx does. The result passes onnx::checker::check_model and opens in Netron.
#pragma once

#include <onnx/onnx_pb.h>

#include "emit/module.h"

namespace tessera {

onnx::ModelProto module_to_onnx(const Module& module);

}  // namespace tessera
