// Tuning over shape ranges: the pipeline of include/tessera/tune.h once per bucket of a
// ShapeBuckets (src/search/shape_range.h), for `tessera tune/partition --shape-range` and Python.
#pragma once

#include <cstddef>
#include <vector>

#include "tessera/tune.h"
#include "search/shape_range.h"

namespace tessera {

// A plan per bucket, bucket b's on graphs[b] (the model bound to
// it). Every bucket runs the pipeline above, unless `anchors_only` and the cost model measures:
// then only the anchors do (ShapeBuckets::anchor: every varying dimension at MIN, OPT or MAX,
// 3 buckets for one axis however many lie between), and every other bucket races the anchors'
// plans end to end at its own shapes (verified_choice.h: the same race, its figures kept in the
// database) and keeps the fastest, whose plan it then shares in the file. Tune time then grows
// with the anchors, not with the buckets: a bucket between them costs a race of at most as many
// plans as there are anchors, instead of a search over measured candidates.
struct TunedBuckets {
  std::vector<TunedPlan> plans;      // per bucket
  std::vector<double> seconds;       // per bucket: its pipeline or its race, wall-clock
  std::vector<bool> searched;        // per bucket: searched (true) or raced among the anchors' plans
};
TunedBuckets tune_buckets(const std::vector<const Graph*>& graphs, const ShapeBuckets& buckets,
                          const std::vector<BackendSpec>& backends, const CostModel& model, CostDatabase* database,
                          const TuneOptions& options, bool anchors_only);
// Whether tune_buckets searches bucket b (false: raced among the anchors' plans).
bool bucket_searched(const ShapeBuckets& buckets, size_t b, const CostModel& model, bool anchors_only);

}  // namespace tessera
