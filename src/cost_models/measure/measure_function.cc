// Compile, warm up, time, summarise. See measure_function.h.
#include "cost_models/measure/measure_function.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <time.h>
#include <unistd.h>
#include <vector>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "tessera/host_tensor.h"
#include "backends/kernel.h"
#include "support/median.h"

namespace tessera {
namespace {

using Clock = std::chrono::steady_clock;

bool is_integer(DType t) { return t == DType::i64 || t == DType::i32 || t == DType::i8 || t == DType::u8; }

// Drops [p, p + n) from every cache level (x86 clflush; elsewhere nothing). Outputs are written
// into buffers a plan last touched a whole run earlier, long gone from the shared cache too: a
// function timed on the same output buffers over and over writes into cached lines and looks up
// to 1.5x faster than it runs (PaddleOCR det: 39 onednn candidates summed to 2.7 ms, the function
// they coalesce into measured 3.8 ms).
void flush_from_caches(const std::byte* p, size_t n) {
#if defined(__x86_64__) || defined(__i386__)
  for (size_t i = 0; i < n; i += 64) _mm_clflush(p + i);
  _mm_mfence();
#else
  (void)p;
  (void)n;
#endif
}

}  // namespace

double timing_clock_seconds(bool cpu_time) {
  if (cpu_time) {
    timespec ts{};
    if (::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0) return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  }
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

size_t default_evict_bytes() {
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  const size_t bytes = l2 > 0 ? 2 * static_cast<size_t>(l2) : size_t{2} << 20;
  return std::min(bytes, size_t{16} << 20);
}

std::string Timing::encode() const {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%a %a %a %lld", median, p10, p90, static_cast<long long>(samples));
  std::string out = buf;
  if (error) {
    std::snprintf(buf, sizeof buf, " %a", *error);
    out += buf;
  }
  return out;
}

std::optional<Timing> Timing::decode(std::string_view text) {
  Timing t;
  long long n = 0;
  double e = 0.0;
  std::string s(text);
  const int fields = std::sscanf(s.c_str(), "%la %la %la %lld %la", &t.median, &t.p10, &t.p90, &n, &e);
  if (fields != 4 && fields != 5) return std::nullopt;
  if (!(t.median >= 0) || n <= 0 || (fields == 5 && !(e >= 0))) return std::nullopt;
  t.samples = n;
  if (fields == 5) t.error = e;
  return t;
}

Timing measure_function(const BackendCompiler& compiler, const Graph& fn, const TimingOptions& options,
                        const BackendCompiler* reference, const BoundaryLayouts* layouts) {
  std::unique_ptr<CompiledFunction> compiled =
      compiler.compile(fn, layouts ? *layouts : native_boundary_layouts(fn, compiler.native_layout(), activation_inputs(fn)));

  std::vector<HostTensor> inputs, outputs;
  for (size_t i = 0; i < fn.inputs.size(); ++i) {
    const TensorType& t = fn.value(fn.inputs[i]).type;
    inputs.push_back(is_integer(t.dtype) ? HostTensor(t) : HostTensor::random(t, options.seed + i));
  }
  for (ValueId v : fn.outputs) outputs.emplace_back(fn.value(v).type);
  std::vector<ConstTensorView> in_views;
  std::vector<TensorView> out_views;
  for (const HostTensor& h : inputs) in_views.push_back(h.view());
  for (HostTensor& h : outputs) out_views.push_back(h.view());

  std::vector<uint8_t> scratch(options.evict_bytes);
  volatile uint8_t sink = 0;
  auto run_once = [&] {
    if (!scratch.empty()) {
      for (size_t i = 0; i < scratch.size(); i += 64) scratch[i] = static_cast<uint8_t>(scratch[i] + 1);
      for (HostTensor& h : outputs) flush_from_caches(h.bytes.data(), h.bytes.size());
      // Inputs in order (a node's activation comes before its weights), as much as the private
      // cache holds: what a producer leaves there. Reading more would push out of the shared cache
      // what the function keeps between runs (oneDNN's reordered weights: resnet18 as one
      // function, 46 MB of weights read back each run, timed 23 ms where it runs in 18).
      size_t left = options.evict_bytes / 2;
      for (const HostTensor& h : inputs)
        for (size_t i = 0; i < h.bytes.size() && left >= 64; i += 64, left -= 64)
          sink = sink + std::to_integer<uint8_t>(h.bytes[i]);
    }
    const double t0 = timing_clock_seconds(options.cpu_time);
    compiled->run(in_views, out_views);
    return timing_clock_seconds(options.cpu_time) - t0;
  };

  // Warm-up: caches, page faults, oneDNN's lazily reordered weights.
  auto warm_end = Clock::now() + std::chrono::duration_cast<Clock::duration>(options.budget * 0.1);
  do run_once(); while (Clock::now() < warm_end);

  std::vector<double> samples;
  const int max_repeats = std::max(1, options.max_repeats);
  const int min_repeats = std::clamp(options.min_repeats, 1, max_repeats);
  auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(options.budget);
  while (static_cast<int>(samples.size()) < max_repeats &&
         (static_cast<int>(samples.size()) < min_repeats || Clock::now() < end)) {
    samples.push_back(run_once());
  }
  std::sort(samples.begin(), samples.end());
  Timing t;
  t.median = percentile(samples, 0.5);
  t.p10 = percentile(samples, 0.1);
  t.p90 = percentile(samples, 0.9);
  t.samples = static_cast<int64_t>(samples.size());
  if (reference) {
    std::vector<HostTensor> expected;
    std::vector<TensorView> expected_views;
    for (ValueId v : fn.outputs) expected.emplace_back(fn.value(v).type);
    for (HostTensor& h : expected) expected_views.push_back(h.view());
    reference->compile(fn)->run(in_views, expected_views);
    // Compared in plain order: the timed instance may keep its boundary in another layout.
    if (!compiled->layouts().all_plain()) compiler.compile(fn)->run(in_views, out_views);
    double worst = 0.0;
    for (size_t i = 0; i < outputs.size(); ++i) worst = std::max(worst, relative_l2_error(outputs[i], expected[i]));
    t.error = worst;
  }
  return t;
}

}  // namespace tessera
