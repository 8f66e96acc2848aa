// The deployment API: load a model, load its plan, run them inside your own program.
//
// A plan is made once, on a tuning machine (`tessera tune`, or tessera.tune in Python), and
// shipped beside the model. The deployment program does three things:
//
//   tessera::Model model = tessera::Model::load("resnet18.onnx");          // or with input shapes
//   tessera::Plan plan = tessera::load_plan("plan.json", model);           // refuses another model's plan
//   tessera::Session session(model, plan, {.threads = 4});                 // compiles every partition
//   session.run(inputs, outputs);                                          // caller's buffers, no copies
//
// Model is a cheap-to-copy handle on an immutable Graph (shared), so a Session keeps what it
// needs alive on its own. A Session is the Executor (executor.h) behind a narrow interface:
// inputs and outputs in model order as non-owning views of the caller's memory, checked against
// the model's types before anything runs; the outputs are written in place. A Session runs on
// one thread at a time; its compute threads (oneDNN, Eigen, OpenBLAS, TBB) are process-wide
// settings, set when it is built and again before each run.
//
// Errors: every failure a user can cause (a bad file, a plan for another model or other input
// shapes, a buffer of the wrong type) throws tessera::UserError with the same one-line message
// the CLI prints ("FILE: PLACE: WHAT").
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tessera/call_profile.h"
#include "tessera/error.h"
#include "tessera/graph.h"
#include "tessera/host_tensor.h"
#include "tessera/kernel.h"
#include "tessera/plan.h"

namespace tessera {

class Executor;

// A graph input or output as a deployment program sees it.
struct TensorInfo {
  std::string name;
  TensorType type;
};

class Model {
 public:
  // Loads an .onnx or tessera .json model; `input_shapes` binds symbolic input dimensions
  // (as --input-shape does). Throws UserError. Import warnings go to stderr as the CLI prints
  // them (import_warnings.h): weights missing from disk as one summary line, each of them too
  // when `verbose_warnings`; options they name are spelt by `spelling` (null: as the library).
  static Model load(const std::string& path, const std::map<std::string, Shape>& input_shapes = {},
                    bool verbose_warnings = false, const OptionSpelling& spelling = {});
  explicit Model(Graph graph);

  const Graph& graph() const { return *graph_; }
  const std::string& path() const { return graph_->source; }
  std::vector<TensorInfo> inputs() const;
  std::vector<TensorInfo> outputs() const;
  // model_fingerprint(graph()) (plan.h): what a plan for this model records.
  std::string fingerprint() const;

 private:
  std::shared_ptr<const Graph> graph_;
};

// Reads a tessera.plan file made for `model`. Throws UserError for a bad file, and for a plan
// made for another model or other input shapes (plan.h: check_plan_binding).
Plan load_plan(const std::string& path, const Model& model);

struct SessionOptions {
  int threads = 1;     // compute threads of every backend (set_compute_threads)
  uint64_t seed = 0;   // seeded weights for constants the model file carries no data for
  // A partition holding a node its backend's spec refuses (an edited or foreign plan) runs, its
  // functions on ref's kernels where the backend cannot compile them, instead of a UserError.
  bool allow_fallback = false;
};

class Session {
 public:
  // Compiles every partition of `plan` on its backend. Throws UserError when the plan records
  // another model or other input shapes, names a backend this build does not run, or puts a node
  // on a backend that cannot take it (unless options.allow_fallback). A plan tuned at another
  // thread count or on another machine (Plan::tuned_on) costs one warning on stderr.
  Session(const Model& model, const Plan& plan, const SessionOptions& options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::vector<TensorInfo>& inputs() const { return inputs_; }
  const std::vector<TensorInfo>& outputs() const { return outputs_; }

  // One run on the caller's buffers: inputs[i] and outputs[i] in inputs()/outputs() order, each
  // with exactly that type (UserError naming the tensor otherwise). Outputs are written in place.
  void run(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs);
  // Convenience: inputs by name (all of them), outputs by name, owned.
  std::map<std::string, HostTensor> run(const std::map<std::string, HostTensor>& inputs);

  // Per call in the plan's main, as `tessera run --profile` prints it (call_profile.h): the
  // median over `repeat` timed runs (after one warm-up) beside the partition's predicted cost.
  // Inputs by name, as run() takes them.
  std::vector<CallProfile> profile(const std::map<std::string, HostTensor>& inputs, int repeat = 10);

  // The compile time of the plan's functions, and what did not compile (runs on ref kernels).
  double compile_ms() const;
  const std::vector<std::string>& codegen_skipped() const;

 private:
  // Inputs by name in inputs() order, each checked to exist (UserError naming it otherwise).
  std::vector<ConstTensorView> ordered(const std::map<std::string, HostTensor>& inputs) const;

  Model model_;
  Plan plan_;
  SessionOptions options_;
  std::unique_ptr<Executor> executor_;
  std::vector<TensorInfo> inputs_, outputs_;
};

}  // namespace tessera
