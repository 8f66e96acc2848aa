// The eigen backend's non-elementwise steps: GEMM (MatMul/Gemm), reductions over a contiguous
// axis range, and softmax. Each is built once from its node (shapes
// resolved, attributes read) and run over a FunctionFrame; GEMMs go through Eigen::Map products,
// which use OpenMP threads when the library is built with -fopenmp.
#pragma once

#include <memory>
#include <vector>

#include "backends/compilers/function_frame.h"
#include "backends/compilers/gemm_shape.h"
#include "tessera/graph.h"

namespace tessera::eigen {

class Step {
 public:
  virtual ~Step() = default;
  virtual void run(const FunctionFrame& frame) = 0;
  virtual size_t scratch_bytes() const { return 0; }
};

// For MatMul/Gemm, ReduceSum/ReduceMean/ReduceMax, Softmax; throws
// KernelUnsupported for other ops or attributes it does not implement.
std::unique_ptr<Step> make_step(const Graph& fn, const Node& node);

}  // namespace tessera::eigen
