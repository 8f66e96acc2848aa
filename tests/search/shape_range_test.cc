// Shape ranges (src/search/shape_range.h): parsing, buckets, the plan file over buckets and
// the bucket a shape runs in.
#include <catch2/catch.hpp>

#include "search/search_fixture.h"
#include "support/graph_builder.h"
#include "tessera/error.h"
#include "search/shape_range.h"

using namespace tessera;
using namespace tessera::testing;

namespace {

// r0 = Relu(x); a = Abs(r0); r1 = Relu(a); out = Add(a, r1), every value of shape `s`.
Graph chain(const Shape& s) {
  GraphBuilder b;
  ValueId r0 = b.op("Relu", "r0", {b.input("x", s)}, s);
  ValueId a = b.op("Abs", "a", {r0}, s);
  ValueId r1 = b.op("Relu", "r1", {a}, s);
  b.output(b.op("Add", "out", {a, r1}, s));
  return std::move(b.g);
}

std::string message(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

std::vector<int64_t> axis(const ShapeBuckets& b, size_t input, size_t dim) {
  std::vector<int64_t> out;
  for (const InputShapes& s : b.buckets) out.push_back(s[input].second[dim]);
  return out;
}

}  // namespace

TEST_CASE("a shape range is MIN:OPT:MAX of one input", "[search][shape_range]") {
  ShapeRange r = parse_shape_range("input_ids=1x16:1x128:1x512", "--shape-range");
  CHECK(r.input == "input_ids");
  CHECK(r.min == Shape{1, 16});
  CHECK(r.opt == Shape{1, 128});
  CHECK(r.max == Shape{1, 512});
  CHECK(shape_range_text(r) == "input_ids=1x16:1x128:1x512");
  CHECK(message([] { parse_shape_range("x=1x16:1x128", "--shape-range"); }).find("three shapes MIN:OPT:MAX") != std::string::npos);
  CHECK(message([] { parse_shape_range("x=1x16:1x8:1x512", "--shape-range"); }).find("dimension 1 must have MIN <= OPT <= MAX") !=
        std::string::npos);
  CHECK(message([] { parse_shape_range("x=1x16:1x128x1:1x512", "--shape-range"); }).find("same rank") != std::string::npos);
  CHECK(message([] { parse_shape_range("x=1x0:1x1:1x2", "--shape-range"); }).find("not a positive integer") != std::string::npos);
}

TEST_CASE("a range's buckets are min, opt, max and the powers of two between", "[search][shape_range]") {
  ShapeBuckets b = make_shape_buckets({parse_shape_range("x=1x16x8:1x128x8:1x512x8", "f")}, {});
  CHECK(axis(b, 0, 1) == std::vector<int64_t>{16, 32, 64, 128, 256, 512});
  CHECK(b.buckets[b.primary][0].second == Shape{1, 128, 8});
  // An opt that is no power of two is a bucket of its own.
  ShapeBuckets odd = make_shape_buckets({parse_shape_range("x=1:3:16", "f")}, {});
  CHECK(axis(odd, 0, 0) == std::vector<int64_t>{1, 2, 3, 4, 8, 16});
  CHECK(odd.buckets[odd.primary][0].second == Shape{3});
}

TEST_CASE("dimensions with the same range vary together; others multiply", "[search][shape_range]") {
  ShapeBuckets linked = make_shape_buckets(
      {parse_shape_range("ids=1x16:1x64:1x64", "f"), parse_shape_range("mask=1x16:1x64:1x64", "f")}, {});
  REQUIRE(linked.buckets.size() == 3);   // 16, 32, 64
  for (const InputShapes& s : linked.buckets) CHECK(s[0].second == s[1].second);
  ShapeBuckets grid = make_shape_buckets({parse_shape_range("x=1x16:2x16:4x64", "f")}, {});
  CHECK(grid.buckets.size() == 9);   // batch {1, 2, 4} x seq {16, 32, 64}
  CHECK(grid.buckets[grid.primary][0].second == Shape{2, 16});
  // Within one input too: a square image's height and width are one axis.
  CHECK(make_shape_buckets({parse_shape_range("x=1x3x32x32:1x3x64x64:1x3x128x128", "f")}, {}).buckets.size() == 3);
  CHECK(message([] { make_shape_buckets({parse_shape_range("x=1x1:1x1:4096x8192", "f")}, {}); })
            .find("more than 64 buckets") != std::string::npos);
}

TEST_CASE("explicit buckets alone make the ranges; with ranges they add buckets inside them", "[search][shape_range]") {
  ShapeBuckets only = make_shape_buckets({}, {"x=1x64,1x16,1x32"});
  CHECK(axis(only, 0, 1) == std::vector<int64_t>{16, 32, 64});
  REQUIRE(only.ranges.size() == 1);
  CHECK(only.ranges[0].min == Shape{1, 16});
  CHECK(only.ranges[0].max == Shape{1, 64});
  CHECK(only.buckets[only.primary][0].second == Shape{1, 64});   // the first listed is opt
  ShapeBuckets both = make_shape_buckets({parse_shape_range("x=1x16:1x16:1x64", "f")}, {"x=1x48"});
  CHECK(axis(both, 0, 1) == std::vector<int64_t>{16, 32, 48, 64});
  CHECK(message([] { make_shape_buckets({parse_shape_range("x=1x16:1x16:1x64", "f")}, {"x=1x80"}); })
            .find("lies outside the range x=1x16:1x16:1x64") != std::string::npos);
  CHECK(message([] { make_shape_buckets({}, {"x=1x16,1x32", "y=1x16"}); }).find("1 shapes, but x has 2") != std::string::npos);
}

TEST_CASE("a plan file over buckets: one plan per distinct assignment, the bucket chosen per shape", "[search][shape_range]") {
  std::vector<BackendSpec> backends{collage_backend("tvm", 1), collage_backend("byoc", 3)};
  const Graph g16 = chain({1, 16}), g32 = chain({1, 32}), g64 = chain({1, 64});
  Plan p16 = run_search(g16, backends, mock_costs({{"tvm", 2.0}, {"byoc", 1.0}})).plan;
  Plan p32 = run_search(g32, backends, mock_costs({{"tvm", 2.0}, {"byoc", 1.0}})).plan;
  Plan p64 = run_search(g64, backends, mock_costs({{"tvm", 1.0}, {"byoc", 2.0}})).plan;   // another assignment
  const std::vector<ShapeRange> ranges{parse_shape_range("x=1x16:1x32:1x64", "f")};
  const std::vector<TunedBucket> buckets{{{{"x", {1, 16}}}, &p16, &g16}, {{{"x", {1, 32}}}, &p32, &g32},
                                         {{{"x", {1, 64}}}, &p64, &g64}};
  const std::string text = plan_set_to_json_text(ranges, buckets, 1);
  const nlohmann::json j = nlohmann::json::parse(text);
  CHECK(j["input_shapes"]["x"] == nlohmann::json({1, 32}));   // the top-level plan is opt's
  CHECK(j["buckets"][0]["plan"] == 0);                           // 16 shares opt's assignment
  CHECK(j["buckets"][1]["plan"] == 0);
  CHECK(j["buckets"][2]["plan"] == 1);
  CHECK(j["bucket_plans"].size() == 1);
  CHECK(plan_set_to_json_text(ranges, buckets, 1) == text);   // byte-identical

  // At a bucket's own shapes: that bucket, exact, checked as a plan for one shape.
  Plan at32 = plan_from_json(j, "set.json", g32);
  CHECK(at32.bucket == 1);
  CHECK(at32.bucket_exact);
  REQUIRE(at32.shape_set);
  CHECK(plan_set_plan_count(*at32.shape_set) == 2);
  // Between buckets: the smallest covering one, its plan read at these shapes.
  const Graph g40 = chain({1, 40});
  Plan at40 = plan_from_json(j, "set.json", g40);
  CHECK(at40.bucket == 2);
  CHECK_FALSE(at40.bucket_exact);
  CHECK(at40.partitions.size() == p64.partitions.size());
  // 16 runs opt's plan, tuned at 32: not exact.
  CHECK_FALSE(plan_from_json(j, "set.json", g16).bucket_exact);
  const Graph g8 = chain({1, 8}), g2 = chain({2, 16});
  CHECK(message([&] { plan_from_json(j, "set.json", g8); }) ==
        "set.json: input_shapes.x: dimension 1 of x=1x8 is 8, outside the plan's range 16..64 (the plan covers "
        "x=1x16:1x32:1x64; tune with wider shape_ranges)");
  CHECK(message([&] { plan_from_json(j, "set.json", g2); }).find("dimension 0 of x=2x16 is 2, outside the plan's range 1..1") !=
        std::string::npos);
}

TEST_CASE("between buckets, an input without a range must keep the plan's shape", "[search][shape_range]") {
  auto two = [](const Shape& sx, const Shape& sy) {
    GraphBuilder b;
    b.output(b.op("Relu", "a", {b.input("x", sx)}, sx));
    b.output(b.op("Relu", "b", {b.input("y", sy)}, sy));
    return std::move(b.g);
  };
  std::vector<BackendSpec> backends{collage_backend("tvm", 1)};
  const Graph g16 = two({1, 16}, {1, 8}), g32 = two({1, 32}, {1, 8});
  Plan p16 = run_search(g16, backends, mock_costs({{"tvm", 1.0}})).plan;
  Plan p32 = run_search(g32, backends, mock_costs({{"tvm", 1.0}})).plan;
  const nlohmann::json j = nlohmann::json::parse(plan_set_to_json_text(
      {parse_shape_range("x=1x16:1x16:1x32", "f")}, {{{{"x", {1, 16}}}, &p16, &g16}, {{{"x", {1, 32}}}, &p32, &g32}}, 0));
  CHECK(plan_from_json(j, "set.json", two({1, 20}, {1, 8})).bucket == 1);
  CHECK_THAT(message([&] { plan_from_json(j, "set.json", two({1, 20}, {1, 9})); }),
             Catch::Contains("input_shapes.y: the plan was made for y=1x8"));
}
