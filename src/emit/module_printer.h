// Text form of a Module (module.txt, golden tests, --dump-ir), in the style of printer.h:
//
//   def @main(%x: f32[1,8]) {
//     %w0 = constant f32[8,8] weight shape-only
//     %0 = @tvmgen_default_onednn_main_0(%x, %w0) /* tvmgen_default_onednn_main_0_call0 <- mm0+relu0, ty=f32[1,8] */
//     return %0
//   }
//
//   def @tvmgen_default_onednn_main_0(%x: f32[1,8], %w0: f32[8,8]) -> f32[1,8]
//       attrs {Compiler="onednn", Primitive=1, global_symbol="tvmgen_default_onednn_main_0"} {
//     fn attrs {Composite="onednn.mm_relu", PartitionedFromPattern="MatMul_Relu_"} {
//       %0 = MatMul(%x, %w0) /* mm0, ty=f32[1,8] */
//       %1 = Relu(%0) /* relu0, ty=f32[1,8] */
//     }
//     return %1
//   }
//
//   extern def @tvmgen_default_eigen_main_1(%a: f32[1,8]) -> f32[1,8] attrs {Extern=1}
//
// main first, then functions by symbol, then external modules. A lowered function is followed by
// its kernel calls and memory plan (buffers by index, workspace offsets, live ranges, and the
// workspace size against the sum of its buffers). Node indices stay visible (%3 is body node 3).
// Stable: equal modules print byte-identically, which is what "pass X changed nothing" compares.
#pragma once

#include <string>

#include "emit/module.h"

namespace tessera {

std::string print_module(const Module& module);
std::string print_function(const Function& fn);
std::string print_lowered(const LoweredFunction& lowered);
// '{Compiler="onednn", Primitive=1}': values that are integers print bare, others quoted.
std::string print_attrs(const FunctionAttrs& attrs);

}  // namespace tessera
