// The halide compiler (see halide_compiler.h): cache lookup, lower + schedule + compile on a miss,
// and the compiled function that calls the loaded pipeline.
#include "backends/halide/halide_compiler.h"

#include <Halide.h>

#include <atomic>
#include <mutex>

#include "backends/halide/halide_cache.h"
#include "backends/halide/halide_lowering.h"
#include "backends/halide/halide_runtime.h"
#include "backends/halide/halide_schedule.h"

namespace tessera {
namespace halide {
namespace {

std::atomic<int64_t> compiled_count{0};
std::mutex compile_mutex;

// Prebuilt halide_buffer_t descriptors, one per argument (inputs, then outputs); a run only sets
// their host pointers. Row-major tensors: Halide's dimension 0 is the tensor's last.
class ArgumentBuffers {
 public:
  explicit ArgumentBuffers(const std::vector<TensorType>& types) : bufs_(types.size()), dims_(types.size()) {
    for (size_t i = 0; i < types.size(); ++i) {
      const Shape& s = types[i].shape;
      int64_t stride = 1;
      for (size_t k = s.size(); k-- > 0;) {
        dims_[i].push_back(halide_dimension_t(0, static_cast<int32_t>(s[k]), static_cast<int32_t>(stride)));
        stride *= s[k];
      }
      halide_buffer_t& b = bufs_[i];
      b.device = 0;
      b.device_interface = nullptr;
      b.host = nullptr;
      b.flags = 0;
      b.type = halide_type_t(halide_type_float, 32);
      b.dimensions = static_cast<int32_t>(s.size());
      b.dim = dims_[i].empty() ? nullptr : dims_[i].data();
      b.padding = nullptr;
      args_.push_back(&b);
    }
  }
  void set(size_t i, const void* data) { bufs_[i].host = static_cast<uint8_t*>(const_cast<void*>(data)); }
  void** args() { return args_.data(); }

 private:
  std::vector<halide_buffer_t> bufs_;
  std::vector<std::vector<halide_dimension_t>> dims_;
  std::vector<void*> args_;
};

class HalideFunction final : public CompiledFunction {
 public:
  HalideFunction(const Graph& fn, std::shared_ptr<PipelineObject> object)
      : CompiledFunction(fn), object_(std::move(object)), buffers_(all_types()) {}
  size_t workspace_bytes() const override { return 0; }   // Halide allocates per call

 protected:
  bool runs_on_own_threads() const override { return true; }   // the Halide runtime's pool
  void run_impl(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs) override {
    for (size_t i = 0; i < inputs.size(); ++i) buffers_.set(i, inputs[i].data);
    for (size_t o = 0; o < outputs.size(); ++o) buffers_.set(inputs.size() + o, outputs[o].data);
    if (const int rc = object_->call(buffers_.args()); rc != 0)
      throw KernelError("halide: pipeline returned error " + std::to_string(rc));
  }

 private:
  std::vector<TensorType> all_types() const {
    std::vector<TensorType> t = input_types();
    t.insert(t.end(), output_types().begin(), output_types().end());
    return t;
  }
  std::shared_ptr<PipelineObject> object_;
  ArgumentBuffers buffers_;
};

// Lowers, schedules and compiles fn into the shared object `so` (atomically).
void compile_into(const Graph& fn, const std::filesystem::path& so, const Halide::Target& target,
                  const std::string& scheduler) {
  std::lock_guard lock(compile_mutex);
  if (std::filesystem::exists(so)) return;   // another thread of this process got there first
  std::filesystem::create_directories(so.parent_path());
  publish_shared_object(
      so,
      [&](const std::filesystem::path& obj) {
        LoweredPipeline lowered = Lowering(fn).run();
        Halide::Pipeline p(lowered.outputs);
        try {
          schedule_pipeline(p, lowered, target, scheduler);
        } catch (const Halide::Error&) {
          lowered = Lowering(fn).run();   // fresh Funcs: the failed attempt may have left schedules behind
          p = Halide::Pipeline(lowered.outputs);
          schedule_pipeline(p, lowered, target, "simple");
        }
        std::vector<Halide::Argument> args(lowered.inputs.begin(), lowered.inputs.end());
        p.compile_to_object(obj.string(), args, kEntryPoint, target);
      },
      "halide: ");
  ++compiled_count;
}

// Halide prints warnings (an autoscheduler's "outer dim vectorization" notes) to stderr and
// aborts on errors unless told otherwise: warnings are dropped, errors become exceptions that
// compile_into turns into KernelUnsupported.
class QuietReporter final : public Halide::CompileTimeErrorReporter {
 public:
  void warning(const char*) override {}
  void error(const char* msg) override { throw Halide::CompileError(msg); }
};

void quiet_diagnostics() {
  static QuietReporter reporter;
  static std::once_flag once;
  std::call_once(once, [] { Halide::set_custom_compile_time_error_reporter(&reporter); });
}

class HalideCompiler final : public BackendCompiler {
 public:
  std::string name() const override { return "halide"; }
  std::string version() const override { return "tessera-halide 3; Halide 14; " + autoscheduler_name(); }

 protected:
  std::unique_ptr<CompiledFunction> compile_impl(const Graph& fn) const override {
    for (const Node& n : fn.nodes)
      if (!lowers(n.op)) unsupported(n, "no Halide lowering for this op");
    for (ValueId v : fn.inputs)
      if (fn.value(v).type.dtype != DType::f32)
        throw KernelUnsupported("halide: input " + fn.value(v).name + " is " + to_string(fn.value(v).type) + " (only f32)");
    quiet_diagnostics();
    const Halide::Target host = Halide::get_host_target();
    // A pipeline that takes a logarithm (LogSoftmax, or its exported Log(ReduceSum(Exp(x - max))))
    // is compiled with IEEE float semantics: Halide's simplifier otherwise reassociates
    // (x - max) - log(sum) into x - (max + log(sum)), which rounds log(sum) away next to a large
    // max (ONNX's test_logsoftmax_large_number: 2.4e-4 off at inputs near 10^4; strict_float on
    // the expression alone does not stop it). Not everywhere: it made BERT's Softmax, LayerNorm
    // and GELU pipelines 4x slower.
    bool takes_log = false;
    for (const Node& n : fn.nodes) takes_log = takes_log || n.op == "Log" || n.op == "LogSoftmax";
    Halide::Target target = host.with_feature(Halide::Target::NoRuntime);
    if (takes_log) target = target.with_feature(Halide::Target::StrictFloat);
    const std::string scheduler = autoscheduler_name();
    const std::string config = version() + "|" + target.to_string() + "|" + machine_params().to_string();
    const std::filesystem::path dir = cache_dir();
    const std::filesystem::path so = cache_path(dir, fn, config);
    try {
      ensure_runtime(dir, host.to_string());
      if (!std::filesystem::exists(so)) compile_into(fn, so, target, scheduler);
    } catch (const std::filesystem::filesystem_error& e) {
      throw KernelUnsupported(std::string("halide: cache directory ") + dir.string() + ": " + e.what());
    }
    return std::make_unique<HalideFunction>(fn, std::make_shared<PipelineObject>(so));
  }
};

}  // namespace

int64_t pipelines_compiled() { return compiled_count.load(); }

}  // namespace halide

std::unique_ptr<BackendCompiler> make_halide_compiler() { return std::make_unique<halide::HalideCompiler>(); }

}  // namespace tessera
