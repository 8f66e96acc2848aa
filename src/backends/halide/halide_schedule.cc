// Autoscheduler plugins and the fallback schedule (see halide_schedule.h).
#include "backends/halide/halide_schedule.h"

#include <cstdlib>
#include <mutex>
#include <set>

#include "backends/kernel.h"

#ifndef TESSERA_HALIDE_PLUGIN_DIR
#define TESSERA_HALIDE_PLUGIN_DIR "/usr/lib/x86_64-linux-gnu/halide14"
#endif

namespace tessera::halide {
namespace {

const char* plugin_file(const std::string& scheduler) {
  if (scheduler == "Mullapudi2016") return "libautoschedule_mullapudi2016.so";
  if (scheduler == "Adams2019") return "libautoschedule_adams2019.so";
  if (scheduler == "Li2018") return "libautoschedule_li2018.so";
  return nullptr;
}

// Loads a plugin once per process (a plugin registers its scheduler when loaded; twice is an error).
void load_scheduler(const std::string& scheduler) {
  static std::mutex mutex;
  static std::set<std::string> loaded;
  std::lock_guard lock(mutex);
  if (loaded.count(scheduler)) return;
  const std::string path = std::string(TESSERA_HALIDE_PLUGIN_DIR) + "/" + plugin_file(scheduler);
  try {
    Halide::load_plugin(path);
  } catch (const Halide::Error& e) {
    throw KernelUnsupported("halide: cannot load autoscheduler plugin " + path + ": " + e.what());
  }
  loaded.insert(scheduler);
}

std::vector<Halide::Range> estimate_region(const Shape& shape) {
  std::vector<Halide::Range> region;
  for (auto it = shape.rbegin(); it != shape.rend(); ++it) region.emplace_back(0, static_cast<int>(*it));
  return region;
}

// The "simple" schedule: every pure Func is inlined into its consumers (Halide's default), every
// reduction is computed at root (else it would be recomputed per element of its consumer), and
// reductions and outputs are vectorized along their innermost dimension (8 lanes: 16 measured
// 3x slower on a strided max pool, whose windows then need wider shuffles) and parallel over
// their outermost.
void schedule_root(Halide::Func f, const Shape& shape, bool update) {
  f.compute_root();
  const auto args = f.args();
  if (!shape.empty() && shape.back() >= 8) {
    f.vectorize(args.front(), 8, Halide::TailStrategy::GuardWithIf);
    if (update) f.update(0).vectorize(args.front(), 8, Halide::TailStrategy::GuardWithIf);
  }
  if (shape.size() >= 2 && shape.front() > 1) {
    f.parallel(args.back());
    if (update) f.update(0).parallel(args.back());
  }
}

void simple_schedule(const LoweredPipeline& lowered) {
  for (const HTensor& r : lowered.reductions) schedule_root(r.func, r.shape, true);
  for (size_t i = 0; i < lowered.outputs.size(); ++i) schedule_root(lowered.outputs[i], lowered.output_shapes[i], false);
}

}  // namespace

std::string autoscheduler_name() {
  const char* env = std::getenv("TESSERA_HALIDE_AUTOSCHEDULER");
  const std::string name = env && *env ? env : "simple";
  if (name != "simple" && !plugin_file(name))
    throw KernelUnsupported("halide: TESSERA_HALIDE_AUTOSCHEDULER=" + name +
                            " (expected simple, Mullapudi2016, Adams2019 or Li2018)");
  return name;
}

Halide::MachineParams machine_params() {
  // 8-way parallelism, a 16 MiB last-level cache, a load costing 40 arithmetic ops: Halide's
  // generic CPU parameters with the LLC of the machines tessera is measured on.
  return Halide::MachineParams(8, 16u << 20, 40.0f);
}

void schedule_pipeline(Halide::Pipeline& p, const LoweredPipeline& lowered, const Halide::Target& target,
                       const std::string& scheduler) {
  if (scheduler == "simple") {
    simple_schedule(lowered);
    return;
  }
  load_scheduler(scheduler);
  for (size_t i = 0; i < lowered.inputs.size(); ++i) {
    Halide::ImageParam param = lowered.inputs[i];
    param.set_estimates(estimate_region(lowered.input_shapes[i]));
  }
  for (size_t i = 0; i < lowered.outputs.size(); ++i) {
    Halide::Func f = lowered.outputs[i];
    f.set_estimates(estimate_region(lowered.output_shapes[i]));
  }
  p.auto_schedule(scheduler, target, machine_params());
}

}  // namespace tessera::halide
