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
// Shapes that vary (shape_range.h): given a plan file made over shape ranges, a Session runs
// any input shapes inside the ranges. The first run at new shapes loads the model again bound to
// them, reads the plan of the bucket that covers them and compiles it (compile_ahead compiles
// every bucket's own shapes when the Session is built instead); each shape keeps its compiled
// functions and memory plan, so later runs at it cost what a Session made for it alone costs.
// At most SessionOptions::max_shapes shapes stay compiled: the least recently run ones are dropped
// first (a Plan or outputs reference from plan_at/outputs_at lives until its shape is dropped).
// Shapes outside the ranges throw UserError naming the input, the dimension and the ranges.
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

#include "tessera/error.h"
#include "tessera/graph.h"
#include "tessera/host_tensor.h"
#include "tessera/plan.h"

namespace tessera {

class Executor;

// One call of the plan's main as Session::profile (and `tessera run --profile`) times it: the
// median over the timed runs, beside what the plan predicted for its partition.
//   call  @tvmgen_default_onednn_main_3   /layers.0/MatMul+...   predicted 0.412 ms  measured 0.455 ms
struct CallProfile {
  std::string kernel;          // "@symbol" or "ref.<Op>"
  std::string label;           // the call node's name in main
  double median_ms = 0.0;
  double predicted_ms = -1.0;  // the plan partition's cost in ms; -1 when not a partition call
  std::string backend;         // the partition's backend, "" when unknown
  int partition = -1;          // the plan partition's index, -1 when not a partition call
  std::vector<std::string> nodes;  // the model nodes the call was outlined from
};

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

  // The same model with these inputs bound to these shapes (the others as they are), loaded again
  // from its file as load() loaded it, without repeating its warnings. Throws UserError for a
  // model made from a Graph in memory (there is no file to bind again) or shapes it refuses.
  Model with_input_shapes(const std::map<std::string, Shape>& input_shapes) const;

  const Graph& graph() const { return *graph_; }
  const std::string& path() const { return graph_->source; }
  std::vector<TensorInfo> inputs() const;
  std::vector<TensorInfo> outputs() const;
  // model_fingerprint(graph()) (plan.h): what a plan for this model records.
  std::string fingerprint() const;

 private:
  std::shared_ptr<const Graph> graph_;
  bool from_file_ = false;   // made by load(): with_input_shapes can load it again
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
  // A plan over shape ranges: compile every bucket's own shapes now rather than at their first run.
  bool compile_ahead = false;
  // A plan over shape ranges: the input shapes kept compiled at most (>= 1). Past it, the shapes
  // least recently run are dropped (never the model's own) and compile again if they come back.
  int max_shapes = 16;
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

  // The model's inputs and outputs at the shapes it was loaded with.
  const std::vector<TensorInfo>& inputs() const { return inputs_; }
  const std::vector<TensorInfo>& outputs() const { return outputs_; }
  // The outputs at other input shapes (in inputs() order), for a plan over shape ranges; compiles
  // those shapes first when they are new. UserError for shapes the plan does not cover.
  const std::vector<TensorInfo>& outputs_at(const std::vector<Shape>& input_shapes);

  // One run on the caller's buffers: inputs[i] and outputs[i] in inputs()/outputs() order, each
  // with exactly that type (UserError naming the tensor otherwise) -- or, for a plan over shape
  // ranges, any input shapes it covers, with outputs of the types outputs_at() gives. Outputs
  // are written in place.
  void run(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs);
  // Convenience: inputs by name (all of them), outputs by name, owned.
  std::map<std::string, HostTensor> run(const std::map<std::string, HostTensor>& inputs);

  // Per call in the plan's main, as `tessera run --profile` prints it (src/runtime/call_profile.h): the
  // median over `repeat` timed runs (after one warm-up) beside the partition's predicted cost.
  // Inputs by name, as run() takes them.
  std::vector<CallProfile> profile(const std::map<std::string, HostTensor>& inputs, int repeat = 10);

  // The compile time of the plan's functions (at every shape compiled so far), and what did not
  // compile (runs on ref kernels) at the model's own shapes.
  double compile_ms() const;
  const std::vector<std::string>& codegen_skipped() const;

  // For a plan over shape ranges: the shapes compiled so far, and the plan that runs these input
  // shapes (its bucket, and whether they are the bucket's own: Plan::bucket, bucket_exact).
  size_t shapes_compiled() const { return bound_.size(); }
  const Plan& plan_at(const std::vector<Shape>& input_shapes);

 private:
  struct Bound;   // the model bound to one set of input shapes, its plan and its executor
  // Inputs by name in inputs() order, each checked to exist (UserError naming it otherwise).
  std::vector<ConstTensorView> ordered(const std::map<std::string, HostTensor>& inputs) const;
  // The model, plan and executor for these input shapes (inputs() order), compiled on first use.
  Bound& bound_at(const std::vector<Shape>& input_shapes);
  std::unique_ptr<Bound> bind(const Model& model, const Plan& plan) const;

  Model model_;
  SessionOptions options_;
  // Drops the least recently run shapes (never the model's own, nor `keep`) past max_shapes.
  void drop_least_recent(const Bound* keep);

  std::map<std::vector<Shape>, std::unique_ptr<Bound>> bound_;   // by input shapes; the model's own first
  Bound* own_ = nullptr;                                          // the model's own shapes
  uint64_t runs_ = 0;                                             // clock of Bound::last_used
  std::vector<TensorInfo> inputs_, outputs_;
};

}  // namespace tessera
