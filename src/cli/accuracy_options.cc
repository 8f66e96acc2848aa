#include "cli/accuracy_options.h"

#include <cstdio>

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

std::string accuracy_summary(const Plan& plan) {
  if (!plan.accuracy) return "";
  const PlanAccuracy& a = *plan.accuracy;
  char buf[256];
  std::snprintf(buf, sizeof buf, "accuracy: budget %g, verified error %.3g on %s (proxy %.3g, %lld round%s)%s",
                a.max_rel_error, a.verified_error, a.calibration.c_str(), a.proxy_error, (long long)a.rounds,
                a.rounds == 1 ? "" : "s", a.verified_error <= a.max_rel_error ? "" : "  NOT MET (fp32 plan)");
  std::string text = buf;
  if (!a.stayed_fp32.empty())
    text += "; " + std::to_string(a.stayed_fp32.size()) + " int8-capable convolution(s)/matmul(s) stayed fp32 (accuracy.stayed_fp32 in the plan says why)";
  return text;
}

}  // namespace tessera::cli
