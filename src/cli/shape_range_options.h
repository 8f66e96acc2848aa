// The shape-range options of partition, tune and bench (src/search/shape_range.h):
// --shape-range NAME=MIN:OPT:MAX and --shapes NAME=S1,S2,..., each repeatable. With either, the
// command tunes one plan per bucket and writes them as one plan file. --bucket-tune anchors|all
// (partition, tune): with measured costs, search only the anchor buckets and race their plans at
// the others, or search every bucket (src/tune/tune_buckets.h).
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/model_options.h"
#include "tessera/graph.h"
#include "search/shape_range.h"

namespace tessera::cli {

struct ShapeRangeOptions {
  std::vector<std::string> ranges;   // NAME=MIN:OPT:MAX
  std::vector<std::string> shapes;   // NAME=S1,S2,...
  std::string bucket_tune = "anchors";

  // `bucket_tune`: whether the command has --bucket-tune (bench tunes every bucket as it is).
  void add_to(CLI::App& cmd, bool bucket_tune = true);
  bool anchors_only() const { return bucket_tune == "anchors"; }
  bool given() const { return !ranges.empty() || !shapes.empty(); }
  // The buckets (UserError naming the flag when malformed).
  ShapeBuckets buckets() const;
  // The --input-shape list of bucket b: `input_shapes` (NAME=DxD...) with the ranged inputs set to
  // the bucket's shapes; an --input-shape for a ranged input is a usage error.
  static std::vector<std::string> bucket_input_shapes(const ShapeBuckets& buckets, size_t b,
                                                      const std::vector<std::string>& input_shapes);
  // The model loaded once per bucket, bound to its shapes (once as it is without buckets).
  static std::vector<Graph> load_graphs(const ModelOptions& model, const std::optional<ShapeBuckets>& buckets);
};

}  // namespace tessera::cli
