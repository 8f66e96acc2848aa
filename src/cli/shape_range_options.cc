#include "cli/shape_range_options.h"

#include "tessera/error.h"
#include "tessera/model_loader.h"

namespace tessera::cli {

void ShapeRangeOptions::add_to(CLI::App& cmd, bool bucket_tune_option) {
  cmd.add_option("--shape-range", ranges,
                 "NAME=MIN:OPT:MAX, e.g. input_ids=1x16:1x128:1x512: tune one plan per bucket (min, opt, max and the "
                 "powers of two between, per varying dimension) into one plan file that runs every shape in the range "
                 "(repeatable, one per input)");
  cmd.add_option("--shapes", shapes,
                 "NAME=S1,S2,...: explicit buckets, one shape per bucket (repeatable, one per input; zipped); "
                 "added to --shape-range's buckets, or alone their extent is the range");
  if (bucket_tune_option)
    cmd.add_option("--bucket-tune", bucket_tune,
                   "with measured costs: anchors (default: search the buckets at every MIN, OPT and MAX, race their "
                   "plans end to end at the buckets between) or all (search every bucket)")
        ->check(CLI::IsMember({"anchors", "all"}));
}

ShapeBuckets ShapeRangeOptions::buckets() const {
  std::vector<ShapeRange> parsed;
  for (const std::string& r : ranges) parsed.push_back(parse_shape_range(r, "--shape-range"));
  return make_shape_buckets(std::move(parsed), shapes, "--shapes");
}

std::vector<std::string> ShapeRangeOptions::bucket_input_shapes(const ShapeBuckets& buckets, size_t b,
                                                                const std::vector<std::string>& input_shapes) {
  std::vector<std::string> out;
  for (const std::string& s : input_shapes) {
    const std::string name = parse_input_shape(s, "--input-shape").first;
    for (const ShapeRange& r : buckets.ranges)
      if (r.input == name)
        throw UserError("--input-shape", s, "input '" + name + "' has a --shape-range; give its shapes there only");
    out.push_back(s);
  }
  for (const auto& [name, shape] : buckets.buckets.at(b)) out.push_back(name + "=" + shape_to_string(shape));
  return out;
}

std::vector<Graph> ShapeRangeOptions::load_graphs(const ModelOptions& model, const std::optional<ShapeBuckets>& buckets) {
  std::vector<Graph> graphs;
  for (size_t b = 0; b < (buckets ? buckets->buckets.size() : 1); ++b) {
    ModelOptions mo = model;
    if (buckets) mo.input_shapes = bucket_input_shapes(*buckets, b, model.input_shapes);
    graphs.push_back(mo.load());
  }
  return graphs;
}

}  // namespace tessera::cli
