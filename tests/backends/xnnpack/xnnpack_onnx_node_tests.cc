// xnnpack_onnx_node_tests: the xnnpack backend against ONNX's own node tests (Debian's
// libonnx-testdata), for every op its spec claims (data/backends/xnnpack.json).
//
//   xnnpack_onnx_node_tests [--data DIR] [--filter SUBSTRING] [--verbose]
//
// Each test_<name> model whose ops xnnpack claims is compiled whole, as one function (its graph
// inputs are the function's inputs, weights included), run once and compared with the test's
// expected outputs (tolerances of ref's oracle, tests/backends/ref/onnx_node_case.h). A case is
// skipped when the importer cannot read it or the compiler declines it (KernelUnsupported: an
// attribute value XNNPACK lacks, such as nearest Resize). Prints failures, the claimed ops with no
// passing test, and the summary line; exits 1 when a case fails or none passes, 77 when DIR does
// not exist.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <set>

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
  std::string data = "/usr/share/libonnx-testdata/data/node", filter;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--data" || a == "--filter") && i + 1 < argc) (a == "--data" ? data : filter) = argv[++i];
    else if (a == "--verbose") verbose = true;
    else {
      std::cerr << "usage: xnnpack_onnx_node_tests [--data DIR] [--filter SUBSTRING] [--verbose]\n";
      return 2;
    }
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
  std::set<std::string> ops_passed;
  for (const auto& d : dirs) {
    const CaseResult r = tessera::oracle::run_case(d, claims, run);
    if (r.verdict == Verdict::Passed) {
      ++passed;
      ops_passed.insert(r.ops.begin(), r.ops.end());
    }
    if (r.verdict == Verdict::Failed) ++failed;
    if (r.verdict == Verdict::Skipped) ++skipped;
    if (r.verdict == Verdict::Failed) std::cout << "FAIL " << r.name << ": " << r.reason << "\n";
    else if (verbose && (r.verdict == Verdict::Passed || r.reason.rfind("unsupported op", 0) != 0))
      std::cout << (r.verdict == Verdict::Passed ? "pass " : "skip ") << r.name << (r.reason.empty() ? "" : ": " + r.reason) << "\n";
  }
  std::string untested;
  for (const auto& op : spec.ops)
    if (!ops_passed.count(op)) untested += (untested.empty() ? "" : ", ") + op;
  std::cout << "claimed ops without a passing node test: " << (untested.empty() ? "none" : untested) << "\n";
  std::cout << "ONNX node tests on xnnpack: " << passed << " passed, " << failed << " failed, " << skipped
            << " skipped (unclaimed ops or declined)\n";
  return failed == 0 && passed > 0 ? 0 : 1;
}
