// The `eigen` backend's compiler: GEMM-like ops through Eigen, and every run of consecutive
// elementwise/broadcast nodes of one shape fused into one ElementwiseProgram (one pass).
//
//   fn(x, W, b) { MatMul(x, W) ─▶ Add(., b) ─▶ Relu } -> y
//     steps: [GemmStep MatMul -> t] [ElementwiseProgram: load t, load b, add, relu, store y]
//
// Nodes are taken in order; an elementwise node joins the open program when its output has the
// program's shape, otherwise (or after any other op) the program is closed and a new step starts.
// A value computed inside a program is stored only when something outside it reads it.
// Reductions and softmax are steps of their own (eigen_kernels.h). An op outside its op table
// (eigen_registration.cc, the ops its spec offers) is KernelUnsupported.
#pragma once

#include <memory>

#include "backends/compilers/backend_compiler.h"

namespace tessera {

std::unique_ptr<BackendCompiler> make_eigen_compiler();

}  // namespace tessera
