// The options of an accuracy budget, shared by partition, tune and bench: --max-rel-error E and
// --calibration NAME=FILE.npy (src/runtime/budgeted_partition.h has the method).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "runtime/budgeted_partition.h"

namespace tessera::cli {

struct AccuracyOptions {
  double max_rel_error = 0.0;
  std::vector<std::string> calibration;   // NAME=FILE.npy
  std::string calibration_ranges = "minmax";   // int8 activation ranges: minmax | percentile:<p>

  void add_to(CLI::App& cmd);
  // Reads the calibration files (UserError naming the flag or file when one is bad).
  AccuracyBudget budget() const;
};

// The summary: "accuracy: budget 0.01, verified error 0.0042 on seeded:0 (proxy 0.0061, 2 rounds)",
// then indented lines: the samples it was verified on and their errors, the fp32 fallback's reason,
// and what stayed fp32 grouped by reason (count, one node and its reason in full).
std::string accuracy_summary(const Plan& plan);

}  // namespace tessera::cli
