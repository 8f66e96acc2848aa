// Shape ranges, their buckets and the plan file that holds one plan per bucket
// (src/search/shape_range.h).
#include "search/shape_range.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <tuple>

#include "tessera/error.h"
#include "tessera/plan.h"

namespace tessera {
namespace {

// At most this many buckets from the ranges: each is a tune of its own.
constexpr size_t kMaxBuckets = 64;

std::string quoted(const std::string& s) { return nlohmann::json(s).dump(); }

std::string dims_json(const Shape& s) {
  std::string out = "[";
  for (size_t d = 0; d < s.size(); ++d) out += (d ? ", " : "") + std::to_string(s[d]);
  return out + "]";
}

std::string shapes_json(const InputShapes& shapes) {
  std::string out = "{";
  for (size_t i = 0; i < shapes.size(); ++i) out += (i ? ", " : "") + quoted(shapes[i].first) + ": " + dims_json(shapes[i].second);
  return out + "}";
}

std::string cost_json(const Cost& c) { return c.is_value() ? format_plan_number(c.number()) : quoted(c.to_string()); }

int64_t element_count(const InputShapes& shapes) {
  int64_t n = 0;
  for (const auto& [name, shape] : shapes) n += std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
  return n;
}

// The sizes an axis is tuned at: min, opt, max and the powers of two strictly between min and max.
std::vector<int64_t> axis_sizes(int64_t lo, int64_t opt, int64_t hi) {
  std::set<int64_t> sizes{lo, opt, hi};
  for (int64_t p = 1; p < hi; p *= 2)
    if (p > lo) sizes.insert(p);
  return {sizes.begin(), sizes.end()};
}

// Which backend runs which node, as text: equal for two plans that assign every node alike.
std::string assignment_text(const Plan& plan, const Graph& graph) {
  std::string out;
  for (const Partition& p : plan.partitions) {
    out += p.backend + ":";
    p.nodes.for_each([&](int n) { out += graph.node(n).name + ","; });
    out += ";";
  }
  return out;
}

Shape read_dims(const nlohmann::json& j, const std::string& file, const std::string& place) {
  if (!j.is_array()) throw UserError(file, place, "expected a list of dimensions");
  Shape s;
  for (const auto& d : j) {
    if (!d.is_number_integer() || d.get<int64_t>() < 1) throw UserError(file, place, "expected positive integers");
    s.push_back(d.get<int64_t>());
  }
  return s;
}

// "1x16x256" as --input-shape writes a shape (positive dimensions); `text` and `flag` for messages.
Shape parse_dims(const std::string& dims, const std::string& text, const std::string& flag) {
  Shape shape;
  std::stringstream ss(dims);
  for (std::string d; std::getline(ss, d, 'x');) {
    if (d.empty() || d.size() > 12 || d.find_first_not_of("0123456789") != std::string::npos || std::stoll(d) == 0)
      throw UserError(flag, "'" + text + "'", "dimension '" + d + "' is not a positive integer");
    shape.push_back(std::stoll(d));
  }
  if (shape.empty() || dims.back() == 'x') throw UserError(flag, "'" + text + "'", "expected a shape such as 1x128");
  return shape;
}

std::string range_list_text(const std::vector<ShapeRange>& ranges) {
  std::string out;
  for (const ShapeRange& r : ranges) out += (out.empty() ? "" : ", ") + shape_range_text(r);
  return out;
}

}  // namespace

ShapeRange parse_shape_range(const std::string& text, const std::string& flag) {
  const size_t eq = text.find('=');
  const auto bad = [&](const std::string& what) { return UserError(flag, "'" + text + "'", what); };
  if (eq == std::string::npos || eq == 0) throw bad("expected NAME=MIN:OPT:MAX, e.g. input_ids=1x16:1x128:1x512");
  const std::string name = text.substr(0, eq);
  std::vector<std::string> parts;
  std::stringstream ss(text.substr(eq + 1));
  for (std::string part; std::getline(ss, part, ':');) parts.push_back(part);
  if (parts.size() != 3) throw bad("expected three shapes MIN:OPT:MAX, e.g. input_ids=1x16:1x128:1x512");
  ShapeRange r{name, {}, {}, {}};
  r.min = parse_dims(parts[0], text, flag);
  r.opt = parse_dims(parts[1], text, flag);
  r.max = parse_dims(parts[2], text, flag);
  if (r.min.size() != r.opt.size() || r.opt.size() != r.max.size()) throw bad("MIN, OPT and MAX must have the same rank");
  for (size_t d = 0; d < r.min.size(); ++d)
    if (!(r.min[d] <= r.opt[d] && r.opt[d] <= r.max[d]))
      throw bad("dimension " + std::to_string(d) + " must have MIN <= OPT <= MAX");
  return r;
}

std::pair<std::string, std::vector<Shape>> parse_shape_list(const std::string& text, const std::string& flag) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UserError(flag, "'" + text + "'", "expected NAME=SHAPE,SHAPE,..., e.g. input=1x16x256,1x64x256");
  const std::string name = text.substr(0, eq);
  std::vector<Shape> shapes;
  std::stringstream ss(text.substr(eq + 1));
  for (std::string part; std::getline(ss, part, ',');) shapes.push_back(parse_dims(part, text, flag));
  if (shapes.empty()) throw UserError(flag, "'" + text + "'", "expected at least one shape");
  return {name, shapes};
}

std::string input_shapes_text(const InputShapes& shapes) {
  std::string out;
  for (const auto& [name, shape] : shapes) out += (out.empty() ? "" : " ") + name + "=" + shape_to_string(shape);
  return out;
}

std::string shape_range_text(const ShapeRange& r) {
  return r.input + "=" + shape_to_string(r.min) + ":" + shape_to_string(r.opt) + ":" + shape_to_string(r.max);
}

ShapeBuckets make_shape_buckets(std::vector<ShapeRange> ranges, const std::vector<std::string>& shape_lists,
                                const std::string& flag) {
  std::set<std::string> seen;
  for (const ShapeRange& r : ranges)
    if (!seen.insert(r.input).second)
      throw UserError::with_text(mention("shape_ranges") + ": " + r.input + ": given twice; give each input one range");

  // Axes: the varying dimensions, one axis per distinct (min, opt, max).
  std::vector<std::tuple<int64_t, int64_t, int64_t>> axes;
  for (const ShapeRange& r : ranges)
    for (size_t d = 0; d < r.min.size(); ++d)
      if (r.min[d] != r.max[d] && std::find(axes.begin(), axes.end(), std::tuple{r.min[d], r.opt[d], r.max[d]}) == axes.end())
        axes.emplace_back(r.min[d], r.opt[d], r.max[d]);
  std::vector<std::vector<int64_t>> sizes;
  size_t count = ranges.empty() ? 0 : 1;
  for (const auto& [lo, opt, hi] : axes) {
    sizes.push_back(axis_sizes(lo, opt, hi));
    count *= sizes.back().size();
    if (count > kMaxBuckets)
      throw UserError::with_text(mention("shape_ranges") + ": " + range_list_text(ranges) + ": makes more than " +
                                 std::to_string(kMaxBuckets) + " buckets; narrow the ranges or list buckets with " +
                                 mention("shapes"));
  }
  std::vector<InputShapes> buckets;
  for (size_t k = 0; k < count; ++k) {
    std::vector<int64_t> at(axes.size());   // this bucket's size on each axis (mixed radix of k)
    for (size_t a = 0, rest = k; a < axes.size(); rest /= sizes[a].size(), ++a) at[a] = sizes[a][rest % sizes[a].size()];
    InputShapes b;
    for (const ShapeRange& r : ranges) {
      Shape s = r.min;
      for (size_t d = 0; d < s.size(); ++d)
        if (r.min[d] != r.max[d])
          s[d] = at[std::find(axes.begin(), axes.end(), std::tuple{r.min[d], r.opt[d], r.max[d]}) - axes.begin()];
      b.emplace_back(r.input, s);
    }
    buckets.push_back(std::move(b));
  }

  // Explicit buckets: one list per input, zipped.
  std::vector<std::pair<std::string, std::vector<Shape>>> lists;
  for (const std::string& text : shape_lists) {
    lists.push_back(parse_shape_list(text, flag));
    for (size_t i = 0; i + 1 < lists.size(); ++i)
      if (lists[i].first == lists.back().first) throw UserError(flag, lists.back().first, "given twice; list each input's shapes once");
    if (lists.back().second.size() != lists.front().second.size())
      throw UserError(flag, "'" + text + "'",
                      std::to_string(lists.back().second.size()) + " shapes, but " + lists.front().first + " has " +
                          std::to_string(lists.front().second.size()) + " (each input lists one shape per bucket)");
  }
  if (!lists.empty() && !ranges.empty()) {
    for (const auto& [name, shapes] : lists)
      if (!seen.count(name))
        throw UserError::mentioning(flag, name, "has no range in " + mention("shape_ranges") + "; with ranges, " +
                                                    mention("shapes") + " adds buckets inside them");
    if (lists.size() != ranges.size())
      throw UserError(flag, "", "give a shape for every ranged input in each bucket");
  }
  for (size_t k = 0; !lists.empty() && k < lists.front().second.size(); ++k) {
    InputShapes b;
    if (ranges.empty()) {
      for (const auto& [name, shapes] : lists) b.emplace_back(name, shapes[k]);
    } else {
      for (const ShapeRange& r : ranges)
        for (const auto& [name, shapes] : lists)
          if (name == r.input) b.emplace_back(name, shapes[k]);
    }
    buckets.push_back(std::move(b));
  }
  if (ranges.empty()) {   // the explicit buckets' extent is the range; the first bucket is opt
    for (const auto& [name, shapes] : lists) {
      ShapeRange r{name, shapes[0], shapes[0], shapes[0]};
      for (const Shape& s : shapes) {
        if (s.size() != r.min.size()) throw UserError(flag, name, "shapes of different ranks");
        for (size_t d = 0; d < s.size(); ++d) {
          r.min[d] = std::min(r.min[d], s[d]);
          r.max[d] = std::max(r.max[d], s[d]);
        }
      }
      ranges.push_back(r);
    }
  }
  for (const InputShapes& b : buckets)
    for (size_t i = 0; i < b.size(); ++i) {
      const ShapeRange& r = ranges[i];
      bool inside = b[i].second.size() == r.min.size();
      for (size_t d = 0; inside && d < r.min.size(); ++d) inside = r.min[d] <= b[i].second[d] && b[i].second[d] <= r.max[d];
      if (!inside)
        throw UserError(flag, b[i].first + "=" + shape_to_string(b[i].second), "lies outside the range " + shape_range_text(r));
    }

  std::stable_sort(buckets.begin(), buckets.end(), [](const InputShapes& x, const InputShapes& y) { return element_count(x) < element_count(y); });
  buckets.erase(std::unique(buckets.begin(), buckets.end()), buckets.end());
  // Duplicates that were not adjacent (equal element counts, other shapes between) go too.
  std::vector<InputShapes> distinct;
  for (InputShapes& b : buckets)
    if (std::find(distinct.begin(), distinct.end(), b) == distinct.end()) distinct.push_back(std::move(b));
  ShapeBuckets out{std::move(ranges), std::move(distinct), 0};
  if (out.buckets.empty())
    throw UserError::mentioning(flag, "", "no buckets: give " + mention("shape_ranges") + " or " + mention("shapes"));
  InputShapes opt;
  for (const ShapeRange& r : out.ranges) opt.emplace_back(r.input, r.opt);
  auto it = std::find(out.buckets.begin(), out.buckets.end(), opt);
  out.primary = it != out.buckets.end() ? static_cast<size_t>(it - out.buckets.begin()) : out.buckets.size() - 1;
  return out;
}

bool ShapeBuckets::anchor(size_t b) const {
  for (size_t i = 0; i < ranges.size(); ++i) {
    const ShapeRange& r = ranges[i];
    const Shape& s = buckets.at(b)[i].second;
    for (size_t d = 0; d < s.size(); ++d)
      if (s[d] != r.min[d] && s[d] != r.opt[d] && s[d] != r.max[d]) return false;
  }
  return true;
}

const nlohmann::json& PlanSet::plan_json(size_t b) const {
  const size_t k = buckets.at(b).plan;
  return k == 0 ? file : file["bucket_plans"][k - 1];
}

size_t PlanSet::choose(const InputShapes& shapes) const {
  std::map<std::string, Shape> has(shapes.begin(), shapes.end());
  const std::string all = range_list_text(ranges);
  for (const ShapeRange& r : ranges) {
    auto it = has.find(r.input);
    if (it == has.end())
      throw UserError(path, "shape_ranges", "the plan ranges input '" + r.input + "', which the model does not have (a plan for another model)");
    const Shape& s = it->second;
    if (s.size() != r.min.size())
      throw UserError(path, "input_shapes." + r.input,
                      "the model has " + r.input + "=" + shape_to_string(s) + ", of another rank than the plan's range " + shape_range_text(r));
    for (size_t d = 0; d < s.size(); ++d)
      if (s[d] < r.min[d] || s[d] > r.max[d])
        throw UserError::mentioning(path, "input_shapes." + r.input,
                                    "dimension " + std::to_string(d) + " of " + r.input + "=" + shape_to_string(s) + " is " +
                                        std::to_string(s[d]) + ", outside the plan's range " + std::to_string(r.min[d]) +
                                        ".." + std::to_string(r.max[d]) + " (the plan covers " + all +
                                        "; tune with wider " + mention("shape_ranges") + ")");
  }
  size_t best = buckets.size();
  for (size_t b = 0; b < buckets.size(); ++b) {
    bool covers = true;
    for (const auto& [name, shape] : buckets[b].input_shapes) {
      const Shape& s = has.at(name);
      for (size_t d = 0; covers && d < s.size(); ++d) covers = s[d] <= shape[d];
    }
    if (covers && (best == buckets.size() || element_count(buckets[b].input_shapes) < element_count(buckets[best].input_shapes))) best = b;
  }
  if (best == buckets.size()) {
    throw UserError::mentioning(path, "buckets",
                                "no bucket covers " + input_shapes_text(shapes) + " (inside the ranges " + all +
                                    ", but no bucket is as large in every dimension; add one with " + mention("shapes") + ")");
  }
  return best;
}

std::map<std::string, Shape> PlanSet::binding(size_t b, const InputShapes& others) const {
  std::map<std::string, Shape> out(others.begin(), others.end());
  for (const auto& [name, shape] : buckets.at(b).input_shapes) out[name] = shape;
  return out;
}

std::shared_ptr<const PlanSet> read_plan_set(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object() || !j.contains("buckets")) return nullptr;
  auto set = std::make_shared<PlanSet>();
  set->path = file;
  const auto& rs = j.contains("shape_ranges") ? j["shape_ranges"] : nlohmann::json::array();
  if (!rs.is_array()) throw UserError(file, "shape_ranges", "expected a list");
  for (size_t i = 0; i < rs.size(); ++i) {
    const std::string place = "shape_ranges[" + std::to_string(i) + "]";
    if (!rs[i].is_object() || !rs[i].contains("input") || !rs[i]["input"].is_string())
      throw UserError(file, place, "expected {\"input\", \"min\", \"opt\", \"max\"}");
    ShapeRange r{rs[i]["input"].get<std::string>(), {}, {}, {}};
    for (auto [key, dims] : {std::pair{"min", &r.min}, std::pair{"opt", &r.opt}, std::pair{"max", &r.max}}) {
      if (!rs[i].contains(key)) throw UserError(file, place, std::string("missing \"") + key + "\"");
      *dims = read_dims(rs[i][key], file, place + "." + key);
    }
    if (r.min.size() != r.opt.size() || r.opt.size() != r.max.size())
      throw UserError(file, place, "min, opt and max must have the same rank");
    set->ranges.push_back(std::move(r));
  }
  const auto& plans = j.contains("bucket_plans") ? j["bucket_plans"] : nlohmann::json::array();
  if (!plans.is_array()) throw UserError(file, "bucket_plans", "expected a list");
  const auto& bs = j["buckets"];
  if (!bs.is_array() || bs.empty()) throw UserError(file, "buckets", "expected a non-empty list");
  for (size_t i = 0; i < bs.size(); ++i) {
    const std::string place = "buckets[" + std::to_string(i) + "]";
    if (!bs[i].is_object() || !bs[i].contains("input_shapes") || !bs[i]["input_shapes"].is_object())
      throw UserError(file, place, "expected {\"input_shapes\": {...}, \"plan\": K}");
    PlanBucket b;
    for (const ShapeRange& r : set->ranges) {
      if (!bs[i]["input_shapes"].contains(r.input))
        throw UserError(file, place + ".input_shapes", "missing the ranged input '" + r.input + "'");
      b.input_shapes.emplace_back(r.input, read_dims(bs[i]["input_shapes"][r.input], file, place + ".input_shapes." + r.input));
    }
    const auto& k = bs[i].contains("plan") ? bs[i]["plan"] : nlohmann::json(0);
    if (!k.is_number_integer() || k.get<int64_t>() < 0 || k.get<int64_t>() > static_cast<int64_t>(plans.size()))
      throw UserError(file, place + ".plan", "expected 0 (the top-level plan) or K of bucket_plans[K - 1]");
    b.plan = k.get<size_t>();
    if (bs[i].contains("total_cost") && bs[i]["total_cost"].is_number()) b.total_cost = Cost::value(bs[i]["total_cost"].get<double>());
    else b.total_cost = Cost::unknown();
    set->buckets.push_back(std::move(b));
  }
  set->file = j;
  return set;
}

std::string plan_set_to_json_text(const std::vector<ShapeRange>& ranges, const std::vector<TunedBucket>& buckets,
                                  size_t primary) {
  const TunedBucket& top = buckets.at(primary);
  std::string text = plan_to_json_text(*top.plan, *top.graph);
  // Which plan each bucket runs: the top-level one, or the first bucket's with its assignment.
  std::vector<std::string> kinds{assignment_text(*top.plan, *top.graph)};
  std::vector<size_t> plan_of(buckets.size());
  std::string nested;
  for (size_t b = 0; b < buckets.size(); ++b) {
    const std::string a = assignment_text(*buckets[b].plan, *buckets[b].graph);
    auto it = std::find(kinds.begin(), kinds.end(), a);
    plan_of[b] = static_cast<size_t>(it - kinds.begin());
    if (it != kinds.end()) continue;
    kinds.push_back(a);
    std::string p = plan_to_json_text(*buckets[b].plan, *buckets[b].graph);
    p.pop_back();   // its newline
    nested += (nested.empty() ? "\n" : ",\n") + p;
  }
  std::string o;
  o += ",\n \"shape_ranges\": [";
  for (size_t i = 0; i < ranges.size(); ++i)
    o += (i ? ", " : "") + std::string("{\"input\": ") + quoted(ranges[i].input) + ", \"min\": " + dims_json(ranges[i].min) +
         ", \"opt\": " + dims_json(ranges[i].opt) + ", \"max\": " + dims_json(ranges[i].max) + "}";
  o += "],\n \"bucket_rule\": \"the smallest bucket at least as large in every dimension; its plan runs at the input's own shape\",\n";
  o += " \"buckets\": [";
  for (size_t b = 0; b < buckets.size(); ++b)
    o += std::string(b ? ",\n  " : "\n  ") + "{\"input_shapes\": " + shapes_json(buckets[b].shapes) + ", \"plan\": " +
         std::to_string(plan_of[b]) + ", \"total_cost\": " + cost_json(buckets[b].plan->total_cost) + "}";
  o += "\n ],\n \"bucket_plans\": [" + nested + "]}\n";
  // The top-level plan's closing "}\n" becomes the set's fields and the closing brace.
  text.resize(text.size() - 2);
  return text + o;
}

void write_plan_set_file(const std::string& path, const std::vector<ShapeRange>& ranges,
                         const std::vector<TunedBucket>& buckets, size_t primary) {
  write_plan_text_file(path, plan_set_to_json_text(ranges, buckets, primary));
}

size_t plan_set_plan_count(const PlanSet& set) {
  return 1 + (set.file.contains("bucket_plans") ? set.file["bucket_plans"].size() : 0);
}

}  // namespace tessera
