// The executor end to end: roofline plans over real backends, run with --check's comparison
// against ref. One run per model (no timing here: speed is bench/'s business).
#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <set>

#include "search/partitioner.h"
#include "support/roofline_plan.h"
#include "support/skip.h"
#include "tessera/backend_spec.h"
#include "tessera/cost_model.h"
#include "runtime/executor.h"
#include "runtime/latency.h"
#include "runtime/model_data.h"
#include "tessera/model_loader.h"
#include "runtime/ref_check.h"

using namespace tessera;
using tessera::testing::roofline_plan;

namespace {

CheckReport run_checked(const std::string& path, const std::string& backends, const std::string& search = "collage",
                        const ImportOptions& import = {}) {
  Graph g = load_model(path, import);
  Plan plan = roofline_plan(g, backends, search);
  Executor executor(g, plan);
  CheckReport report = check_against_ref(executor, model_inputs(g, 0));
  INFO(path << " on " << backends << ": " << report.first_failure());
  CHECK(report.ok);
  CHECK(report.outputs.size() == g.outputs.size());
  return report;
}

}  // namespace

// The backends the plan's partitions use, sorted, unique.
std::set<std::string> plan_backends(const Plan& plan) {
  std::set<std::string> out;
  for (const Partition& p : plan.partitions) out.insert(p.backend);
  return out;
}

TEST_CASE("executor: each backend runs its part of small models and passes --check") {
  // single:<backend> puts on the backend every node it can take (the rest on ref), so each check
  // compares that backend's compiled functions with ref, never ref with itself.
  struct Mix {
    const char* model;
    const char* backend;
  };
  for (const Mix& m : {Mix{"data/models/tiny_mlp.json", "onednn"}, Mix{"data/models/tiny_mlp.json", "eigen"},
                       Mix{"data/models/tiny_mlp.json", "blas"}, Mix{"data/models/conv_block.json", "onednn"},
                       Mix{"data/models/conv_block.json", "eigen"}}) {
    INFO(m.model << " on " << m.backend);
    Graph g = load_model(m.model);
    Plan plan = roofline_plan(g, std::string("ref,") + m.backend, std::string("single:") + m.backend);
    REQUIRE(plan_backends(plan).count(m.backend) == 1);
    Executor executor(g, plan);
    CHECK(executor.codegen_skipped().empty());
    CHECK(executor.module().external_modules.size() == executor.module().functions.size());
    CheckReport report = check_against_ref(executor, model_inputs(g, 0));
    INFO(report.first_failure());
    CHECK(report.ok);
    CHECK_FALSE(report.partitions.empty());
  }
  // Collage's choice over all four: whatever it picks must check out too.
  run_checked("data/models/tiny_mlp.json", "ref,onednn,eigen,blas");
  run_checked("data/models/conv_block.json", "ref,onednn,eigen,blas");
}

TEST_CASE("executor: a plan all on ref reproduces the reference run bit for bit") {
  CheckReport r = run_checked("data/models/conv_block.json", "ref");
  CHECK(r.max_abs_error == 0.0);
}

TEST_CASE("executor: outputs are deterministic and repeated runs agree") {
  Graph g = load_model("data/models/conv_block.json");
  Executor executor(g, roofline_plan(g, "ref,onednn"));
  std::vector<HostTensor> x = model_inputs(g, 0);
  std::vector<HostTensor> first = executor.run(x);
  std::vector<HostTensor> second = executor.run(x);
  REQUIRE(first.size() == 1);
  CHECK(first[0].bytes == second[0].bytes);
  CHECK(executor.module().external_modules.size() == executor.module().functions.size());
  CHECK(executor.codegen_skipped().empty());
}

TEST_CASE("measure_latency times every run, or gives up after a first run above the bar") {
  Graph g = load_model("data/models/conv_block.json");
  Executor executor(g, roofline_plan(g, "ref,onednn"));
  std::vector<HostTensor> x = model_inputs(g, 0);
  CHECK(measure_latency(executor, x, 5).samples_ms.size() == 5);
  CHECK(measure_latency(executor, x, 5, 1, 1e9).samples_ms.size() == 5);
  LatencyStats gave_up = measure_latency(executor, x, 5, 1, 0.0);
  REQUIRE(gave_up.samples_ms.size() == 1);
  CHECK(gave_up.median_ms == gave_up.samples_ms[0]);
}

TEST_CASE("executor: partition outputs are compared, not only model outputs") {
  CheckReport r = run_checked("data/models/conv_block.json", "ref,onednn", "greedy");
  CHECK_FALSE(r.partitions.empty());
}

TEST_CASE("executor: every bundled ONNX model runs its roofline plan within tolerance", "[models]") {
  for (const char* model : {"data/models/squeezenet1_1.onnx", "data/models/resnet18.onnx", "data/models/mobilenet_v2.onnx",
                            "data/models/bert_encoder.onnx", "data/models/bert_encoder_24.onnx"}) {
    CheckReport r = run_checked(model, "ref,onednn,eigen,blas");
    CHECK(r.max_abs_error < 1.0);
  }
}

TEST_CASE("executor: a function its backend cannot compile runs lowered on ref kernels, and says so") {
  // conv_block entirely on blas: blas has no Conv, so codegen leaves the function lowered.
  Graph g = load_model("data/models/conv_block.json");
  Plan plan;
  plan.model = "conv_block";
  Partition p;
  p.backend = "blas";
  p.device = "cpu";
  p.nodes = IndexSet::all(g.num_nodes());
  p.cost = Cost::value(1.0);
  p.candidates.push_back(ChosenCandidate{p.nodes, "test", p.cost, {}});
  plan.partitions.push_back(p);
  finalize_plan_order(plan, g);
  Executor executor(g, plan);
  REQUIRE(executor.codegen_skipped().size() == 1);
  CHECK(executor.module().external_modules.empty());
  CheckReport report = check_against_ref(executor, model_inputs(g, 0));
  INFO(report.first_failure());
  CHECK(report.ok);
  CHECK(report.max_abs_error == 0.0);   // the same ref kernels on the same data
}

TEST_CASE("executor: the Collage test graphs (no weights at all) run", "[models]") {
  run_checked("data/models/collage_diamond.json", "ref,onednn");
  run_checked("data/models/collage_chain.json", "ref,eigen");
}

TEST_CASE("executor: PaddleOCR's classifier and recognizer run within tolerance", "[.paddleocr]") {
  // scripts/fetch_models.sh puts them in the git-ignored data/models/paddleocr/; the detector is
  // left out here (4 s, most of it ref's reference convolutions for --check). Without them this
  // ctest entry (runtime_test.paddleocr) reports Skipped, which CI does not accept.
  for (auto [file, shape] : {std::pair{"ch_ppocr_mobile_v2.0_cls_infer.onnx", Shape{1, 3, 48, 192}},
                             std::pair{"ch_PP-OCRv4_rec_infer.onnx", Shape{1, 3, 48, 320}}}) {
    const std::string path = std::string("data/models/paddleocr/") + file;
    if (!std::filesystem::exists(path)) testing::skip_test(path + " missing: run scripts/fetch_models.sh");
    ImportOptions import;
    import.input_shapes["x"] = shape;
    import.warn = [](const std::string&) {};
    run_checked(path, "ref,onednn,eigen,blas", "collage", import);
  }
}
