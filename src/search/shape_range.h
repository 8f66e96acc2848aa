// Shape ranges: one plan file for every shape of a model's dynamic axes, as a set of buckets.
//
// Terms. A ShapeRange is what `--shape-range NAME=MIN:OPT:MAX` says of one input: per dimension
// the smallest and largest size it will run at, and the size it runs at most (opt). A bucket is
// one concrete binding of the ranged inputs (input_ids=1x128) that tessera tunes a plan at. A
// PlanSet is the plan file's buckets: per bucket its shapes and which of the file's plans it
// runs; buckets whose tuned plans assign every node to the same backend share one plan.
//
//   --shape-range input=1x16x256:1x128x256:1x512x256
//     -> axis (dimension 1): 16 32 64 128 256 512     (min, max, opt and the powers of two between)
//     -> buckets input=1x16x256 ... input=1x512x256, each tuned on one cost database
//     -> plan file: the opt bucket's plan at the top (what a reader of one shape sees), then
//        "shape_ranges", "buckets" [{input_shapes, plan, total_cost}], "bucket_plans" [plan, ...]
//   run at input=1x77x256 -> the smallest bucket covering it (1x128x256), whose plan -- which
//     backend runs which node -- is compiled at 1x77x256 itself.
//
// Why a bucket's plan is compiled at the exact shape rather than the inputs padded to the
// bucket's: every tessera backend compiles for static shapes anyway, so the exact shape costs one
// compile (per distinct shape, kept) and no padded work, and no model's semantics are at stake
// (padding a sequence changes a softmax over it unless a mask says otherwise). What the bucket
// carries is the search's decision, not machine code.
//
// Dimensions of several inputs with the same MIN:OPT:MAX are one axis (they vary together, as a
// model's shared symbolic dimension does: input_ids and attention_mask share a sequence length).
// Explicit buckets (`--shapes NAME=S1,S2,...`, repeated per input and zipped) are added to the
// ranges' buckets; without --shape-range their per-dimension minima and maxima are the ranges.
//
// Choosing a bucket for a shape: every ranged dimension must lie in its range (else UserError
// naming the input, the dimension and the ranges); among the buckets no smaller than the shape
// in every dimension, the one with the fewest elements (ties: the earlier bucket). A plan file
// without buckets is a range of one: exactly its input_shapes.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/cost.h"
#include "tessera/tensor_type.h"

namespace tessera {

class Graph;
struct Plan;

// Input shapes in graph-input order (as Plan::input_shapes).
using InputShapes = std::vector<std::pair<std::string, Shape>>;

struct ShapeRange {
  std::string input;
  Shape min, opt, max;
};

// "NAME=MIN:OPT:MAX" with each shape as --input-shape writes it (1x16:1x128:1x512); throws
// UserError naming `flag` for bad syntax, ranks that differ, or MIN <= OPT <= MAX broken.
ShapeRange parse_shape_range(const std::string& text, const std::string& flag);
// "NAME=S1,S2,..." (--shapes): one input's shape in each explicit bucket.
std::pair<std::string, std::vector<Shape>> parse_shape_list(const std::string& text, const std::string& flag);

// Buckets and ranges from the command line: the ranges' buckets (axes as above, at most 64
// buckets) and the explicit ones, deduplicated, ordered by total elements; `ranges` gains a range
// per input only the explicit buckets name. Throws UserError for explicit lists of unequal
// lengths, a bucket outside its range, or too many buckets.
struct ShapeBuckets {
  std::vector<ShapeRange> ranges;
  std::vector<InputShapes> buckets;   // each: the ranged inputs' shapes, in ranges order
  size_t primary = 0;                 // the bucket at every range's opt (else the largest)

  // An anchor: every varying dimension at its range's MIN, OPT or MAX (tune.h: tune_buckets
  // searches the anchors and races their plans at the other buckets).
  bool anchor(size_t b) const;
};
ShapeBuckets make_shape_buckets(std::vector<ShapeRange> ranges, const std::vector<std::string>& shape_lists,
                                const std::string& flag = "--shapes");

// "input_ids=1x16:1x128:1x512" (the --shape-range text of a range).
std::string shape_range_text(const ShapeRange& r);
// "input_ids=1x77 attention_mask=1x77" (as --input-shape writes each).
std::string input_shapes_text(const InputShapes& shapes);

// One bucket of a plan file.
struct PlanBucket {
  InputShapes input_shapes;   // the ranged inputs' shapes
  size_t plan = 0;            // 0: the file's top-level plan; k > 0: bucket_plans[k - 1]
  Cost total_cost;            // the bucket's own tuned total, for reports
};

// What a plan file made over shape ranges holds besides its top-level plan. `file` is the whole
// file's JSON: plan_json(k) is a view into it.
struct PlanSet {
  std::vector<ShapeRange> ranges;
  std::vector<PlanBucket> buckets;
  nlohmann::json file;
  std::string path;           // for messages

  // The plan JSON bucket `b` runs (the top-level object itself for plan 0).
  const nlohmann::json& plan_json(size_t b) const;
  // The bucket for `shapes` (every graph input, graph-input order) as above; throws UserError
  // ("FILE: input_shapes.NAME: ...") for a shape outside the ranges or covered by no bucket.
  size_t choose(const InputShapes& shapes) const;
  // The input shapes of bucket b's own shape with every input of `others` not ranged (for the
  // whole binding of a model at that bucket).
  std::map<std::string, Shape> binding(size_t b, const InputShapes& others) const;
};

// Reads "shape_ranges", "buckets" and "bucket_plans" of a plan file's JSON; nullptr when it has
// none (a plan for one shape). Throws UserError("FILE: PLACE: WHAT") for malformed ones.
std::shared_ptr<const PlanSet> read_plan_set(const nlohmann::json& j, const std::string& file);

// One bucket's tuned plan and the graph it was tuned on, for writing a plan file.
struct TunedBucket {
  InputShapes shapes;
  const Plan* plan = nullptr;
  const Graph* graph = nullptr;
};

// The plan file's text for `buckets` tuned over `ranges`: buckets[primary]'s plan at the top,
// then the set. Buckets whose plans give every node the same backend share one plan (the first
// such bucket's, or the top-level one). Byte-identical for equal inputs.
std::string plan_set_to_json_text(const std::vector<ShapeRange>& ranges, const std::vector<TunedBucket>& buckets,
                                  size_t primary);
// Writes it atomically, as write_plan_file does.
void write_plan_set_file(const std::string& path, const std::vector<ShapeRange>& ranges,
                         const std::vector<TunedBucket>& buckets, size_t primary);

// The number of distinct plans a written set holds (1 + bucket_plans).
size_t plan_set_plan_count(const PlanSet& set);

}  // namespace tessera
