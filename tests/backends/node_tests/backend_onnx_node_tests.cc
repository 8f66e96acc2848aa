// backend_onnx_node_tests: a real backend against ONNX's own node tests (Debian's
// libonnx-testdata), for every op its spec claims (data/backends/<backend>.json).
//
//   backend_onnx_node_tests --backend NAME --expected LIST [--data DIR] [--filter SUBSTRING]
//                           [--verbose] [--write-expected FILE]
//
// Each test_<name> model whose ops the backend claims is compiled whole, as one function (its
// graph inputs are the function's inputs, weights included), run once on one thread and compared
// with the test's expected outputs (tolerances of ref's oracle, tests/backends/ref/onnx_node_case.h).
// A case is skipped when the importer cannot read it or the compiler declines it
// (KernelUnsupported: an attribute value the library lacks, such as XNNPACK's nearest Resize, or a
// Slice with steps on onednn). Prints failures, the claimed ops with no passing test, and the
// summary line. The floor is LIST (tests/backends/<backend>/onnx_node_tests_pass.txt, committed):
// the run fails (exit 1) when any case fails, and when a listed case skips or is missing, so a
// change that turns passes into skips is caught; --write-expected writes this run's passes as the
// list. Exit 77 (ctest's skip) when DIR does not exist, 2 on bad usage or an unknown backend.
#include <iostream>
#include <set>

#include "backends/ref/node_test_runner.h"
#include "backends/ref/onnx_node_case.h"
#include "backends/compilers/backend_compiler.h"
#include "tessera/backend_spec.h"

namespace fs = std::filesystem;
using tessera::oracle::CaseResult;
using tessera::oracle::Verdict;

namespace {

std::vector<tessera::HostTensor> run_compiled(const tessera::BackendCompiler& compiler, const tessera::Graph& g,
                                                const std::map<tessera::ValueId, tessera::HostTensor>& bindings) {
  using namespace tessera;
  auto compiled = compiler.compile(g);
  std::vector<ConstTensorView> in;
  for (ValueId v : g.inputs) {
    auto it = bindings.find(v);
    if (it == bindings.end()) throw KernelUnsupported("input '" + g.value(v).name + "' has no test data");
    in.push_back(it->second.view());
  }
  std::vector<HostTensor> outs;
  for (ValueId v : g.outputs) outs.emplace_back(g.value(v).type);
  std::vector<TensorView> out;
  for (HostTensor& t : outs) out.push_back(t.view());
  compiled->run(in, out);
  return outs;
}

}  // namespace

int main(int argc, char** argv) {
  tessera::oracle::RunnerOptions opt;
  std::string backend;
  CLI::App app{"A real backend against ONNX's node tests", "backend_onnx_node_tests"};
  app.add_option("--backend", backend, "the backend (onednn, xnnpack, halide, eigen, blas, ...)")->required();
  tessera::oracle::add_runner_options(app, opt);
  if (auto status = tessera::oracle::start_runner(app, opt, argc, argv)) return *status;

  std::unique_ptr<tessera::BackendCompiler> compiler;
  tessera::BackendSpec spec;
  try {
    compiler = tessera::make_backend_compiler(backend);
    spec = tessera::builtin_backend_spec(backend);
  } catch (const std::exception& e) {
    std::cerr << "backend_onnx_node_tests: --backend " << backend << ": " << e.what() << "\n";
    return 2;
  }
  tessera::set_compute_threads(1);
  auto claims = [&](const std::string& op) { return spec.supports(op); };
  auto run = [&](const tessera::Graph& g, const std::map<tessera::ValueId, tessera::HostTensor>& b) {
    return run_compiled(*compiler, g, b);
  };
  tessera::oracle::Floor floor(opt);
  std::set<std::string> ops_passed;
  for (const auto& d : tessera::oracle::case_dirs(opt)) {
    const CaseResult r = tessera::oracle::run_case(d, claims, run);
    if (r.verdict == Verdict::Passed) ops_passed.insert(r.ops.begin(), r.ops.end());
    // Unclaimed ops are most of the suite: --verbose leaves those skips out.
    floor.record(r, opt.verbose && (r.verdict == Verdict::Passed || r.reason.rfind("unsupported op", 0) != 0));
  }
  std::string untested;
  for (const auto& op : spec.ops)
    if (!ops_passed.count(op)) untested += (untested.empty() ? "" : ", ") + op;
  std::cout << "claimed ops without a passing node test: " << (untested.empty() ? "none" : untested) << "\n";
  std::cout << "ONNX node tests on " << backend << ": " << floor.passed << " passed, " << floor.failed << " failed, "
            << floor.skipped << " skipped (unclaimed ops or declined)\n";
  return floor.finish(opt, backend);
}
