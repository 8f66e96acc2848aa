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
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include <CLI/CLI.hpp>

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
  std::string data = "/usr/share/libonnx-testdata/data/node", filter, expected_path, write_expected;
  bool verbose = false;
  CLI::App app{"The xnnpack backend against ONNX's node tests", "xnnpack_onnx_node_tests"};
  app.add_option("--expected", expected_path, "committed list of the cases expected to pass")->required();
  app.add_option("--data", data, "node test directory (default: libonnx-testdata's)");
  app.add_option("--filter", filter, "run only cases whose name contains this");
  app.add_flag("--verbose", verbose, "print every case's verdict");
  app.add_option("--write-expected", write_expected, "write this run's passing cases as the list");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  std::set<std::string> expected;
  try {
    expected = tessera::oracle::read_expected_passes(expected_path);
  } catch (const std::runtime_error& e) {
    std::cerr << "xnnpack_onnx_node_tests: " << e.what() << "\n";
    return 2;
  }
  if (!fs::is_directory(data)) {
    std::cerr << "xnnpack_onnx_node_tests: " << data << " not found (install libonnx-testdata); skipping\n";
    return 77;
  }
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(data))
    if (e.is_directory() && e.path().filename().string().find(filter) != std::string::npos) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());

  const tessera::BackendSpec spec = tessera::builtin_backend_spec("xnnpack");
  const auto compiler = tessera::make_backend_compiler("xnnpack");
  tessera::set_compute_threads(1);
  auto claims = [&](const std::string& op) { return spec.supports(op); };
  auto run = [&](const tessera::Graph& g, const std::map<tessera::ValueId, tessera::HostTensor>& b) {
    return run_on_xnnpack(*compiler, g, b);
  };
  int passed = 0, failed = 0, skipped = 0;
  std::set<std::string> ops_passed, seen;
  std::vector<std::string> passes, regressed, unlisted;
  for (const auto& d : dirs) {
    const CaseResult r = tessera::oracle::run_case(d, claims, run);
    seen.insert(r.name);
    const bool listed = expected.count(r.name) > 0;
    if (r.verdict == Verdict::Passed) {
      ++passed;
      passes.push_back(r.name);
      ops_passed.insert(r.ops.begin(), r.ops.end());
    }
    if (r.verdict == Verdict::Failed) ++failed;
    if (r.verdict == Verdict::Skipped) ++skipped;
    if (r.verdict == Verdict::Failed) std::cout << "FAIL " << r.name << ": " << r.reason << "\n";
    else if (r.verdict == Verdict::Skipped && listed) std::cout << "FAIL " << r.name << " (expected to pass) skipped: " << r.reason << "\n";
    else if (verbose && (r.verdict == Verdict::Passed || r.reason.rfind("unsupported op", 0) != 0))
      std::cout << (r.verdict == Verdict::Passed ? "pass " : "skip ") << r.name << (r.reason.empty() ? "" : ": " + r.reason) << "\n";
    if (listed && r.verdict != Verdict::Passed) regressed.push_back(r.name);
    if (!listed && r.verdict == Verdict::Passed) unlisted.push_back(r.name);
  }
  std::vector<std::string> missing;
  for (const std::string& name : expected)
    if (filter.empty() || name.find(filter) != std::string::npos)
      if (!seen.count(name)) missing.push_back(name);
  for (const std::string& name : missing) std::cout << "FAIL " << name << " (expected to pass): not in " << data << "\n";

  std::string untested;
  for (const auto& op : spec.ops)
    if (!ops_passed.count(op)) untested += (untested.empty() ? "" : ", ") + op;
  std::cout << "claimed ops without a passing node test: " << (untested.empty() ? "none" : untested) << "\n";
  std::cout << "ONNX node tests on xnnpack: " << passed << " passed, " << failed << " failed, " << skipped
            << " skipped (unclaimed ops or declined)\n";
  std::cout << "expected to pass (" << expected_path << "): " << expected.size() << "; " << regressed.size()
            << " of them failed or skipped, " << missing.size() << " missing\n";
  if (!unlisted.empty()) {
    std::string names;
    for (size_t i = 0; i < unlisted.size() && i < 10; ++i) names += (i ? ", " : "") + unlisted[i];
    std::cout << "passing but not listed (--write-expected adds them): " << names << (unlisted.size() > 10 ? ", ..." : "")
              << "\n";
  }
  if (!write_expected.empty()) {
    std::ofstream out(write_expected);
    out << "# ONNX node tests (libonnx-testdata) expected to pass on the xnnpack backend; ctest fails when\n"
           "# one of them fails or skips. Regenerate: xnnpack_onnx_node_tests --expected FILE --write-expected FILE\n";
    for (const std::string& name : passes) out << name << "\n";
  }
  return failed == 0 && regressed.empty() && missing.empty() && passed > 0 ? 0 : 1;
}
