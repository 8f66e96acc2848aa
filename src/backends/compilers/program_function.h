// ProgramFunction<Program>: the CompiledFunction of a backend that compiles a whole function into
// one program object (onednn's OnednnProgram, xnnpack's XnnpackProgram).
//
//   return std::make_unique<ProgramFunction<xnnpack::XnnpackProgram>>(fn);
//   return std::make_unique<ProgramFunction<onednn::OnednnProgram>>(fn, engine, precision);
//
// It owns a copy of the Graph, because the program keeps references into it and the compiled
// function outlives the caller's Graph; the program is built from that copy, with any further
// arguments passed on. Program needs `Program(const Graph&, Args...)`,
// `size_t workspace_bytes() const`, `void run(std::span<const ConstTensorView>,
// std::span<const TensorView>)` and `static constexpr bool kOwnThreads` (whether its library runs
// on threads of its own rather than OpenMP's team: CompiledFunction::runs_on_own_threads).
#pragma once

#include <span>
#include <utility>

#include "backends/compilers/backend_compiler.h"

namespace tessera {

template <class Program>
class ProgramFunction final : public CompiledFunction {
 public:
  template <class... Args>
  explicit ProgramFunction(const Graph& fn, Args&&... args)
      : CompiledFunction(fn), fn_(fn), program_(fn_, std::forward<Args>(args)...) {}
  size_t workspace_bytes() const override { return program_.workspace_bytes(); }

 protected:
  void run_impl(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs) override {
    program_.run(inputs, outputs);
  }
  bool runs_on_own_threads() const override { return Program::kOwnThreads; }

 private:
  Graph fn_;   // owned: the program refers to it
  Program program_;
};

}  // namespace tessera
