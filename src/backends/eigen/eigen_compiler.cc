// The eigen compiler (see eigen_compiler.h).
#include "backends/eigen/eigen_compiler.h"

#include <Eigen/Core>
#include <string>
#include <variant>

#include "backends/compilers/function_frame.h"
#include "backends/eigen/eigen_kernels.h"
#include "backends/eigen/elementwise_program.h"

namespace tessera {
namespace {

using eigen::ElementwiseProgram;

class EigenFunction final : public CompiledFunction {
 public:
  explicit EigenFunction(const Graph& fn) : CompiledFunction(fn), fn_(fn), frame_(fn_) {
    const auto consumers = fn_.consumers();
    std::vector<int> program_of(fn_.nodes.size(), -1);   // node -> index in programs_
    std::vector<ElementwiseProgram*> programs;
    ElementwiseProgram* open = nullptr;
    for (size_t n = 0; n < fn_.nodes.size(); ++n) {
      const Node& node = fn_.nodes[n];
      if (eigen::elementwise_op(node.op) && node.outputs.size() == 1) {
        const Shape& shape = fn_.value(node.outputs[0]).type.shape;
        if (!open || shape != open_shape_) {
          steps_.emplace_back(std::make_unique<ElementwiseProgram>(shape));
          open = std::get<std::unique_ptr<ElementwiseProgram>>(steps_.back()).get();
          open_shape_ = shape;
          programs.push_back(open);
        }
        open->add(fn_, node);
        program_of[n] = static_cast<int>(programs.size()) - 1;
        continue;
      }
      open = nullptr;
      steps_.emplace_back(eigen::make_step(fn_, node));
      for (ValueId v : node.outputs) frame_.materialize(v);
    }
    // Store what leaves a program: read by another step, or a function output.
    for (size_t n = 0; n < fn_.nodes.size(); ++n) {
      if (program_of[n] < 0) continue;
      const ValueId v = fn_.nodes[n].outputs[0];
      bool escapes = fn_.is_output(v);
      for (NodeId c : consumers[static_cast<size_t>(v)]) escapes |= program_of[static_cast<size_t>(c)] != program_of[n];
      if (escapes) {
        programs[static_cast<size_t>(program_of[n])]->store(v);
        frame_.materialize(v);
      }
    }
  }
  size_t workspace_bytes() const override {
    size_t n = frame_.owned_bytes();
    for (const auto& s : steps_)
      if (auto* k = std::get_if<std::unique_ptr<eigen::Step>>(&s)) n += (*k)->scratch_bytes();
    return n;
  }

 protected:
  void run_impl(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs) override {
    frame_.bind(inputs, outputs);
    for (auto& s : steps_) std::visit([&](auto& step) { step->run(frame_); }, s);
  }

 private:
  Graph fn_;
  FunctionFrame frame_;
  Shape open_shape_;
  std::vector<std::variant<std::unique_ptr<eigen::Step>, std::unique_ptr<ElementwiseProgram>>> steps_;
};

class EigenCompiler final : public BackendCompiler {
 public:
  std::string name() const override { return "eigen"; }
  std::string version() const override {
    return "tessera-eigen 1; Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) +
           "." + std::to_string(EIGEN_MINOR_VERSION);
  }

 protected:
  std::unique_ptr<CompiledFunction> compile_impl(const Graph& fn) const override {
    return std::make_unique<EigenFunction>(fn);
  }
};

}  // namespace

std::unique_ptr<BackendCompiler> make_eigen_compiler() { return std::make_unique<EigenCompiler>(); }

}  // namespace tessera
