// One ONNX node test (libonnx-testdata: test_<name>/model.onnx + test_data_set_N/*.pb) run on the
// ref kernels (or another backend: run_case with a GraphRunner), and its verdict.
//
// A case is Skipped, never Failed, when ref cannot be asked the question: an op ref has no kernel
// for, an opset/IR or dtype tessera does not import, a shape the importer cannot make static, or
// a feature a kernel declares unsupported (KernelUnsupported). It Fails when the kernels throw
// anything else or an output differs from the expected one beyond rtol 1e-4 / atol 1e-5 (f32,
// f64; exact for integers and bools). Models whose integer inputs decide shapes (Reshape's
// `shape`) are imported a second time with those inputs as initializers, as exported models
// carry them; nodes the importer then folds into constants are counted, not run by ref. Models
// of opsets older than the importer reads (7) are imported at opset 7 when every op in them has
// the same definition there (GlobalAveragePool-1, Elu-6, ...), which ONNX's schemas decide.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "backends/kernel.h"

namespace tessera::oracle {

enum class Verdict { Passed, Failed, Skipped };

struct CaseResult {
  std::string name;                // "test_abs"
  Verdict verdict = Verdict::Skipped;
  std::string reason;              // why skipped or failed
  std::vector<std::string> ops;    // op types in the model, sorted, unique
  int nodes_run = 0;               // nodes ref executed
  int nodes_folded = 0;            // nodes the importer folded into constants
  bool inputs_as_constants = false;  // imported with integer inputs as initializers
  bool opset_raised = false;         // imported at opset 7, where its ops are defined alike
};

CaseResult run_case(const std::filesystem::path& dir, const KernelRegistry& kernels);

// The same case on another backend, checked against the test's expected outputs: `claims(op)`
// says which ops it takes (others skip), `run` computes the graph's outputs (in g.outputs order)
// from the bound inputs. KernelUnsupported from `run` is a skip, as above.
using GraphRunner = std::function<std::vector<HostTensor>(const Graph& g, const std::map<ValueId, HostTensor>& bindings)>;
CaseResult run_case(const std::filesystem::path& dir, const std::function<bool(const std::string&)>& claims,
                    const GraphRunner& run);

}  // namespace tessera::oracle
