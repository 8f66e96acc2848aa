// xnnpack_onnx_node_tests: the xnnpack backend against ONNX's own node tests (Debian's
// libonnx-testdata), for every op its spec claims (data/backends/xnnpack.json).
//
//   xnnpack_onnx_node_tests --expected LIST [--data DIR] [--filter SUBSTRING] [--verbose]
//                           [--write-expected FILE]
//
// Each test_<name> model whose ops xnnpack claims is compiled whole, as one function (its graph
// inputs are the function's inputs, weights included), run once and compared with the test's
// expected outputs (tolerances of ref's oracle, tests/backends/ref/onnx_node_case.h). A case is
// skipped when the importer cannot read it or the compiler declines it (KernelUnsupported: an
// attribute value XNNPACK lacks, such as nearest Resize). Prints failures, the claimed ops with no
// passing test, and the summary line. The floor is LIST (onnx_node_tests_pass.txt beside this
// file, committed): the run fails (exit 1) when any case fails, and when a listed case skips or is
// missing, so a change that turns passes into skips is caught; --write-expected writes this run's
// passes as the list. Exit 77 (ctest's skip) when DIR does not exist, 2 on bad usage.
#include <iostream>
#include <set>

#include "node_test_runner.h"
#include "onnx_node_case.h"
#include "tessera/backend_compiler.h"
#include "tessera/backend_spec.h"

namespace fs = std::filesystem;
using tessera::oracle::CaseResult;
using tessera::oracle::Verdict;

namespace {

std::vector<tessera::HostTensor> run_on_xnnpack(const tessera::BackendCompiler& compiler, const tessera::Graph& g,
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
  CLI::App app{"The xnnpack backend against ONNX's node tests", "xnnpack_onnx_node_tests"};
  tessera::oracle::add_runner_options(app, opt);
  if (auto status = tessera::oracle::start_runner(app, opt, argc, argv)) return *status;

  const tessera::BackendSpec spec = tessera::builtin_backend_spec("xnnpack");
  const auto compiler = tessera::make_backend_compiler("xnnpack");
  tessera::set_compute_threads(1);
  auto claims = [&](const std::string& op) { return spec.supports(op); };
  auto run = [&](const tessera::Graph& g, const std::map<tessera::ValueId, tessera::HostTensor>& b) {
    return run_on_xnnpack(*compiler, g, b);
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
  std::cout << "ONNX node tests on xnnpack: " << floor.passed << " passed, " << floor.failed << " failed, "
            << floor.skipped << " skipped (unclaimed ops or declined)\n";
  return floor.finish(opt, "xnnpack");
}
