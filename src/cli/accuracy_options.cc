#include "cli/accuracy_options.h"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "tessera/error.h"
#include "runtime/npy.h"

namespace tessera::cli {

void AccuracyOptions::add_to(CLI::App& cmd) {
  cmd.add_option("--max-rel-error", max_rel_error,
                 "end-to-end relative L2 error budget vs fp32 for reduced-precision backends such as onednn_bf16 and onednn_int8 "
                 "(default 0: fp32 plans)");
  cmd.add_option("--calibration", calibration,
                 "NAME=FILE.npy: a calibration input for verifying the budget (repeatable; default seeded random); "
                 "a file may stack several samples along axis 0: the budget must hold on each");
  cmd.add_option("--calibration-ranges", calibration_ranges,
                 "int8 activation ranges from the calibration inputs: minmax (default), mse (least squared quantization error) or percentile:<p>, e.g. percentile:99.99");
}

AccuracyBudget AccuracyOptions::budget() const {
  AccuracyBudget b;
  b.max_rel_error = max_rel_error;
  b.calibration_ranges = calibration_ranges;
  for (const std::string& s : calibration) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
      throw UserError("--calibration", s, "expected NAME=FILE.npy");
    if (!b.calibration.emplace(s.substr(0, eq), read_npy(s.substr(eq + 1))).second)
      throw UserError("--calibration", s, "input '" + s.substr(0, eq) + "' given twice");
  }
  if (!calibration.empty() && max_rel_error == 0)
    throw UserError("--calibration", "", "only means something with --max-rel-error > 0");
  return b;
}

namespace {

// The kind of a stayed_fp32 reason (src/runtime/budgeted_partition.h lists them), so that reasons
// of one kind group together; an unknown reason is its text up to the first colon.
std::string reason_kind(const std::string& why) {
  static const std::pair<const char*, const char*> kinds[] = {
      {"no int8 candidate", "no int8 candidate runs it"},
      {"its int8 candidates' least error", "its int8 error alone exceeds the budget"},
      {"failed verification", "failed verification"},
      {"not faster", "not faster"},
      {"over the budget beside", "over the budget beside the int8 partitions chosen"},
      {"lost the end-to-end race", "lost the end-to-end race"}};
  for (const auto& [prefix, kind] : kinds)
    if (why.rfind(prefix, 0) == 0) return kind;
  return why.substr(0, why.find(':'));
}

}  // namespace

std::string accuracy_summary(const Plan& plan) {
  if (!plan.accuracy) return "";
  const PlanAccuracy& a = *plan.accuracy;
  char buf[256];
  std::snprintf(buf, sizeof buf, "accuracy: budget %g, verified error %.3g on %s (proxy %.3g, %lld round%s)%s",
                a.max_rel_error, a.verified_error, a.calibration.c_str(), a.proxy_error, (long long)a.rounds,
                a.rounds == 1 ? "" : "s", a.verified_error <= a.max_rel_error ? "" : "  NOT MET (fp32 plan)");
  std::string text = buf;
  if (a.samples > 0) {   // on what data: the samples and the rule that made verified_error of them
    text += "\n    verified on " + std::to_string(a.samples) + " calibration sample" + (a.samples == 1 ? "" : "s") + ", " + a.bound + " of";
    for (double e : a.sample_errors) {
      std::snprintf(buf, sizeof buf, " %.3g", e);
      text += buf;
    }
  }
  if (!a.fallback.empty()) text += "\n    no reduced precision: " + a.fallback;
  if (!a.stayed_fp32.empty()) {
    text += "\n    " + std::to_string(a.stayed_fp32.size()) +
            " int8-capable convolution(s)/matmul(s) stayed fp32 (accuracy.stayed_fp32 in the plan has each one's reason):";
    std::vector<std::string> kinds;   // in order of first appearance
    std::map<std::string, std::vector<size_t>> of_kind;
    for (size_t i = 0; i < a.stayed_fp32.size(); ++i) {
      const std::string k = reason_kind(a.stayed_fp32[i].second);
      if (!of_kind.count(k)) kinds.push_back(k);
      of_kind[k].push_back(i);
    }
    for (const std::string& k : kinds) {
      const std::vector<size_t>& at = of_kind[k];
      const auto& [node, why] = a.stayed_fp32[at.front()];
      text += "\n      " + std::to_string(at.size()) + " " + k + ", e.g. " + node + ": " + why;
    }
  }
  return text;
}

}  // namespace tessera::cli
