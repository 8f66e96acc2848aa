// The --report file of `tessera tune` (docs/design.md, "Running and deploying"):
//   {"ranks": K, "measured_per_rank": [n0, ...], "from_database": n, "invalid": n, "wall_s": x, ...}
// with these extra fields: "measure_s" (the measuring phase), "candidates" (requests over all
// models), "distinct" (distinct cost keys among them: from_database + what was measured),
// "database", "redealt", "late", "dead_ranks", "silent_ranks", "hosts" ([{"rank", "host",
// "machine"}]) and "models" ([{"model", "plan", "partitions", "distinct", "predicted_ms", "buckets",
// "bucket_tune_s"}]; the models' "distinct" add up to more than the run's when they share
// functions; with --shape-range, partitions and predicted_ms are the OPT bucket's, bucket_tune_s
// each bucket's phase 2 in seconds).
// Written atomically (temporary file + rename), like plans.
#pragma once

#include <string>
#include <vector>

namespace tessera::cli {

struct TuneReport {
  struct Host {
    int rank = 0;
    std::string host, machine;
  };
  struct Model {
    std::string model, plan;
    size_t partitions = 0;
    size_t distinct = 0;   // distinct cost keys of this model alone (shared ones count in each)
    double predicted_ms = 0;
    size_t buckets = 1;                 // --shape-range: the plan file's buckets
    std::vector<double> bucket_tune_s;  // per bucket: phase 2 (search, wholes, race) in seconds
  };
  int ranks = 1;
  std::vector<size_t> measured_per_rank;
  size_t from_database = 0;
  size_t invalid = 0;
  double wall_s = 0, measure_s = 0;
  size_t candidates = 0, distinct = 0;
  std::string database;
  size_t redealt = 0, late = 0;
  std::vector<int> dead_ranks, silent_ranks;
  std::vector<Host> hosts;
  std::vector<Model> models;
};

// Throws UserError("PATH: cannot write report") when it cannot.
void write_tune_report(const std::string& path, const TuneReport& report);

}  // namespace tessera::cli
