// XnnpackProgram: the compiled form of one function for XNNPACK, and the builder that makes it
// (see xnnpack_compiler.h for the design). Internal to src/backends/xnnpack/.
//
// Building walks the function's nodes once and records *definitions*, not XNNPACK objects: the
// tensors (TensorDef) and nodes (NodeDef) of one subgraph. Static tensors (weights) are filled
// from their source value's data when a runtime is made, because weights are function inputs
// whose data arrives only with a run. instantiate() turns the definitions into a subgraph and a
// runtime (XNNPACK packs the weights then); the compiler calls it once at compile time with zero
// weights to validate the function, and run() again whenever the weights' pointers or the thread
// pool differ from the ones the current runtime was made with (normally once, on the first run).
#pragma once

#include <xnnpack.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/compilers/function_frame.h"
#include "backends/xnnpack/xnnpack_layout.h"
#include "ir/boundary_layout.h"
#include "tessera/graph.h"

namespace tessera::xnnpack {

// One tensor of the subgraph.
struct TensorDef {
  std::vector<size_t> dims;                       // as XNNPACK sees them (NHWC for rank 4)
  uint32_t external_id = XNN_INVALID_VALUE_ID;    // function inputs and outputs
  uint32_t flags = 0;                             // XNN_VALUE_FLAG_EXTERNAL_INPUT / _OUTPUT
  // Static tensors: `fill` computes `static_elems` floats from the data of `sources` (weight
  // inputs or constants; one pointer each) when a runtime is made.
  std::vector<ValueId> sources;
  size_t static_elems = 0;
  std::function<void(const float* const* src, float* dst)> fill;
};

// One node of the subgraph: `define` adds it, given the XNNPACK id of every TensorDef.
using DefineFn = std::function<xnn_status(xnn_subgraph_t, const std::vector<uint32_t>& ids)>;
struct NodeDef {
  std::string what;   // "node 'Conv_3' (Conv)", for messages
  DefineFn define;
};

// A function input, copied (or permuted) into the program's own buffer before each run: XNNPACK
// reads up to XNN_EXTRA_BYTES past an input's end, slack the caller's buffer need not have.
struct InputSlot {
  ValueId value;
  View view;
  uint32_t external_id;
  std::vector<float> buffer;
};

// A function output: written in place when the subgraph's order is the boundary's order (plain
// order, or an nhwc boundary written NHWC), else permuted out of the program's own buffer after
// each run (NHWC -> plain, or plain -> an nhwc boundary for a Reshape-like op's NCHW result).
struct OutputSlot {
  ValueId value;
  uint32_t external_id;
  bool in_place;
  std::vector<float> buffer;
};

// Fused Relu/Clip nodes after an operator: XNNPACK's output_min/output_max.
struct Clamp {
  float lo, hi;
  ValueId out;   // the value the fused chain ends with
};

class XnnpackProgram {
 public:
  static constexpr bool kOwnThreads = true;   // its pthreadpool (program_function.h)
  // Builds the definitions and validates them by making a runtime (zero weights); throws
  // KernelUnsupported naming the node and the reason.
  // `layouts` (empty: all plain): the boundary order of each input and output; an nhwc input is
  // XNNPACK's own order (copied, not permuted), an nhwc output is written as XNNPACK makes it.
  explicit XnnpackProgram(const Graph& fn, const BoundaryLayouts& layouts = {});
  ~XnnpackProgram();

  void run(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs);
  size_t workspace_bytes() const;

 private:
  // --- building (xnnpack_program.cc) ---
  void build();
  [[noreturn]] void unsupported(const Node& node, const std::string& why) const;
  // The tensor node `reader` reads v through, in `view`: an external input, a static tensor
  // (constants), or the producer's tensor (a static reshape when the view differs but the memory
  // order is the same).
  size_t read(const Node& reader, ValueId v, View view = View::Native);
  // The tensor `writer` writes v into (an external output for function outputs). View::Plain
  // keeps a rank-4 v NCHW, allowed only when nothing inside the function reads it.
  size_t write(const Node& writer, ValueId v, View view = View::Native);
  // A static tensor laid out by `fill` from v's data; v must be a function input or a constant.
  size_t weight(const Node& reader, ValueId v, std::vector<size_t> dims, size_t elems,
                std::function<void(const float*, float*)> fill);
  // A static tensor computed from several weights (BatchNormalization's folded scale and shift).
  size_t weight(const Node& reader, const std::vector<ValueId>& vs, std::vector<size_t> dims, size_t elems,
                std::function<void(const float* const*, float*)> fill);
  // An intermediate tensor of the subgraph that no tessera value names.
  size_t temporary(std::vector<size_t> dims);
  // Relu/Clip nodes that follow on `v` (its only consumer, not a function output), absorbed.
  Clamp fuse_clamps(ValueId v);
  void add(const Node& node, DefineFn define);
  // A constant's elements (f32 or integer data converted), nullopt when v is not such a constant.
  std::optional<std::vector<double>> constant_values(ValueId v) const;
  Shape shape(ValueId v) const { return fn_.value(v).type.shape; }
  void require_unused_extra_outputs(const Node& node) const;

  // What Conv and ConvTranspose read (xnnpack_ops_conv.cc): input x (rank 4, NCHW; anything else is
  // unsupported as "only 2-D <what> (NCHW input)"), filter w [., ., KH, KW], bias b (kNoValue when
  // absent), the output's shape, the groups and the channel counts.
  struct ConvOperands {
    ValueId x, w, b;
    Shape xs, ws, ys;
    int64_t g, C, O, KH, KW;
  };
  ConvOperands conv_operands(const Node& node, const std::string& what) const;

  // --- one builder per op family ---
  void build_conv(const Node& node);              // xnnpack_ops_conv.cc
  void build_conv_transpose(const Node& node);
  void build_fully_connected(const Node& node);
  void build_pool(const Node& node);              // xnnpack_ops_spatial.cc
  void build_global_pool(const Node& node);
  void build_resize(const Node& node);
  void build_pad(const Node& node);
  void build_depth_to_space(const Node& node);
  void build_unary(const Node& node);             // xnnpack_ops_elementwise.cc
  void build_binary(const Node& node);
  void build_softmax(const Node& node);
  void build_batch_norm(const Node& node);
  void build_reshape(const Node& node);

 public:
  // Relu / Clip bounds when `node` is a clamp with constant bounds (xnnpack_ops_elementwise.cc).
  static std::optional<std::pair<float, float>> clamp_bounds(const Graph& fn, const Node& node);

 private:
  // --- runtime (xnnpack_runtime.cc) ---
  std::vector<const float*> static_sources() const;   // this run's data of every static source
  void instantiate(const std::vector<const float*>& sources, pthreadpool_t pool);

  const Graph& fn_;
  FunctionFrame frame_;
  std::vector<Layout> layout_;   // by ValueId: boundary layout (plain for everything else)
  std::vector<char> varying_;    // by ValueId: an input whose contents change between runs
  bool varying_weights_ = false;   // a static tensor is made from such an input: rebuilt every run
  std::vector<std::vector<NodeId>> consumers_;
  std::vector<char> absorbed_;                          // by node: fused into an earlier node
  std::vector<TensorDef> defs_;
  std::vector<NodeDef> nodes_;
  std::map<std::pair<ValueId, View>, size_t> def_of_;   // (value, view) -> index in defs_
  std::vector<InputSlot> inputs_;
  std::vector<OutputSlot> outputs_;
  uint32_t externals_ = 0;

  // The current runtime and what it was made from.
  xnn_runtime_t runtime_ = nullptr;
  std::vector<std::vector<float>> static_data_;         // alive as long as the runtime
  std::vector<const float*> built_for_;
  pthreadpool_t built_pool_ = nullptr;
  std::vector<std::pair<uint32_t, void*>> set_up_;      // external pointers of the last setup
};

}  // namespace tessera::xnnpack
