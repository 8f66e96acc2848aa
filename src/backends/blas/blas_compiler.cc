// The blas compiler (see blas_compiler.h).
#include "backends/blas/blas_compiler.h"

#include <cblas.h>

#include <string>
#include <vector>

#include "backends/compilers/broadcast.h"
#include "backends/compilers/function_frame.h"
#include "backends/compilers/gemm_shape.h"

namespace tessera {
namespace {

struct Bias {
  ValueId value;
  float scale;
  std::vector<int64_t> strides;   // broadcast to the output
};

struct GemmStep {
  GemmShape g;
  ValueId dst;                    // where the result goes (the last folded Add's output)
  std::vector<Bias> biases;
};

class BlasFunction final : public CompiledFunction {
 public:
  explicit BlasFunction(const Graph& fn) : CompiledFunction(fn), fn_(fn), frame_(fn_) {
    const auto consumers = fn_.consumers();
    std::vector<int> step_of(fn_.values.size(), -1);       // value -> GEMM step that writes it
    for (size_t n = 0; n < fn_.nodes.size(); ++n) {
      const Node& node = fn_.nodes[n];
      if (node.op == "MatMul" || node.op == "Gemm") {
        GemmStep s{gemm_shape(fn_, node), node.outputs[0], {}};
        if (s.g.c != kNoValue)
          s.biases.push_back({s.g.c, s.g.beta, broadcast_strides(fn_.value(s.g.c).type.shape, out_shape(s))});
        step_of[static_cast<size_t>(s.dst)] = static_cast<int>(steps_.size());
        steps_.push_back(std::move(s));
        continue;
      }
      if (node.op == "Add" && node.inputs.size() == 2 && fold_add(node, consumers, step_of)) continue;
      throw KernelUnsupported("blas: node '" + node.name + "': op " + node.op +
                              " is not a GEMM or a bias Add folded into one");
    }
    for (const GemmStep& s : steps_) frame_.materialize(s.dst);
  }
  size_t workspace_bytes() const override { return frame_.owned_bytes(); }

 protected:
  bool runs_on_own_threads() const override { return true; }   // OpenBLAS's server threads
  void run_impl(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs) override {
    frame_.bind(inputs, outputs);
    for (const GemmStep& s : steps_) {
      const GemmShape& g = s.g;
      float* y = frame_.f32(s.dst);
      for (size_t i = 0; i < s.biases.size(); ++i)
        broadcast_fill(frame_.cf32(s.biases[i].value), s.biases[i].strides, out_shape(s), y, s.biases[i].scale, i > 0);
      const float beta = s.biases.empty() ? 0.0f : 1.0f;
      const float* a = frame_.cf32(g.a);
      const float* b = frame_.cf32(g.b);
      const int lda = static_cast<int>(g.trans_a ? g.M : g.K), ldb = static_cast<int>(g.trans_b ? g.K : g.N);
      for (int64_t bt = 0; bt < g.batch; ++bt)
        cblas_sgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans, g.trans_b ? CblasTrans : CblasNoTrans,
                    static_cast<int>(g.M), static_cast<int>(g.N), static_cast<int>(g.K), g.alpha,
                    a + g.a_offset[static_cast<size_t>(bt)], lda, b + g.b_offset[static_cast<size_t>(bt)], ldb, beta,
                    y + bt * g.M * g.N, static_cast<int>(g.N));
    }
  }

 private:
  const Shape& out_shape(const GemmStep& s) const { return fn_.value(s.g.y).type.shape; }

  // Folds Add(gemm_out, bias) into the GEMM that writes gemm_out when gemm_out has no other use
  // and bias is ready before that GEMM runs (an input, a constant, or an earlier step's result).
  bool fold_add(const Node& add, const std::vector<std::vector<NodeId>>& consumers, std::vector<int>& step_of) {
    for (int side = 0; side < 2; ++side) {
      const ValueId mine = add.inputs[static_cast<size_t>(side)], other = add.inputs[static_cast<size_t>(1 - side)];
      const int step = step_of[static_cast<size_t>(mine)];
      if (step < 0 || consumers[static_cast<size_t>(mine)].size() != 1 || fn_.is_output(mine)) continue;
      GemmStep& s = steps_[static_cast<size_t>(step)];
      const Value& o = fn_.value(other);
      if (o.type.dtype != DType::f32 || fn_.value(add.outputs[0]).type.shape != out_shape(s)) continue;
      if (!broadcasts_to(o.type.shape, out_shape(s))) continue;
      if (o.kind == ValueKind::Intermediate && !produced_before(other, s)) continue;
      s.biases.push_back({other, 1.0f, broadcast_strides(o.type.shape, out_shape(s))});
      step_of[static_cast<size_t>(mine)] = -1;
      s.dst = add.outputs[0];
      step_of[static_cast<size_t>(s.dst)] = step;
      return true;
    }
    return false;
  }
  // True when `v` is written by a GEMM step that runs before `s`.
  bool produced_before(ValueId v, const GemmStep& s) const {
    for (const GemmStep& t : steps_) {
      if (&t == &s) return false;
      if (t.dst == v) return true;
    }
    return false;
  }

  Graph fn_;
  FunctionFrame frame_;
  std::vector<GemmStep> steps_;
};

class BlasCompiler final : public BackendCompiler {
 public:
  std::string name() const override { return "blas"; }
  std::string version() const override {
    return std::string("tessera-blas 1; ") + openblas_get_config() + "; core " + ensure_openblas_coretype();
  }

 protected:
  std::unique_ptr<CompiledFunction> compile_impl(const Graph& fn) const override {
    return std::make_unique<BlasFunction>(fn);
  }
};

}  // namespace

std::unique_ptr<BackendCompiler> make_blas_compiler() {
  ensure_openblas_coretype();
  ensure_openblas_short_spin();
  return std::make_unique<BlasCompiler>();
}

}  // namespace tessera
