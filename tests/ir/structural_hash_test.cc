#include <catch2/catch.hpp>

#include <cstring>

#include "support/collage_graphs.h"
#include "cost_models/estimator.h"
#include "cost_models/mock_cost_model.h"
#include "ir/structural_hash.h"

using namespace tessera;

namespace {

TensorData floats(std::vector<float> v) {
  auto b = std::make_shared<TensorBytes>(v.size() * 4);
  std::memcpy(b->data(), v.data(), b->size());
  return b;
}

TensorData ints(std::vector<int64_t> v) {
  auto b = std::make_shared<TensorBytes>(v.size() * 8);
  std::memcpy(b->data(), v.data(), b->size());
  return b;
}

// x -> MatMul(x, w) -> Reshape(., shape) -> out, with names and data chosen by the caller.
Graph function(const std::string& prefix, std::vector<float> w, std::vector<int64_t> shape) {
  Graph g;
  ValueId x = g.add_value({.name = prefix + "x", .type = {DType::f32, {1, 2}}, .kind = ValueKind::Input});
  g.inputs.push_back(x);
  ValueId wv = g.add_value({.name = prefix + "w", .type = {DType::f32, {2, 2}}, .kind = ValueKind::Constant, .data = floats(w)});
  ValueId sv = g.add_value({.name = prefix + "s", .type = {DType::i64, {2}}, .kind = ValueKind::Constant, .data = ints(shape)});
  ValueId m = g.add_value({.name = prefix + "m", .type = {DType::f32, {1, 2}}});
  ValueId y = g.add_value({.name = prefix + "y", .type = {DType::f32, {2, 1}}});
  g.add_node({.name = prefix + "mm", .op = "MatMul", .inputs = {x, wv}, .outputs = {m}});
  g.add_node({.name = prefix + "rs", .op = "Reshape", .inputs = {m, sv}, .outputs = {y}});
  g.outputs.push_back(y);
  return g;
}

}  // namespace

TEST_CASE("names and weight values do not change function identity", "[ir]") {
  Graph a = function("a_", {1, 2, 3, 4}, {2, 1});
  Graph b = function("b_", {5, 6, 7, 8}, {2, 1});
  CHECK(structurally_equal(a, b));
  CHECK(structural_hash(a) == structural_hash(b));
}

TEST_CASE("shape-determining constants count by value", "[ir]") {
  Graph a = function("", {1, 2, 3, 4}, {2, 1});
  Graph b = function("", {1, 2, 3, 4}, {-1, 1});
  CHECK_FALSE(structurally_equal(a, b));
  CHECK(structural_hash(a) != structural_hash(b));
}

TEST_CASE("attributes, ops and wiring count", "[ir]") {
  Graph a = function("", {1, 2, 3, 4}, {2, 1});
  Graph b = a;
  b.nodes[1].attrs["allowzero"] = int64_t{1};
  CHECK_FALSE(structurally_equal(a, b));
  Graph c = a;
  c.nodes[0].op = "Add";
  CHECK(structural_hash(a) != structural_hash(c));
  Graph d = a;
  std::swap(d.nodes[0].inputs[0], d.nodes[0].inputs[1]);
  CHECK_FALSE(structurally_equal(a, d));
}

TEST_CASE("canonical_form is what the hash and equality are computed from", "[ir]") {
  const Graph a = function("a_", {1, 2, 3, 4}, {2, 1});
  Graph other = a;
  other.nodes[1].attrs["allowzero"] = int64_t{1};
  for (const Graph& g : {function("b_", {5, 6, 7, 8}, {2, 1}), function("", {1, 2, 3, 4}, {-1, 1}), other}) {
    CHECK(fnv1a64(canonical_form(g)) == structural_hash(g));
    CHECK((canonical_form(a) == canonical_form(g)) == structurally_equal(a, g));
  }
}

// Pinned values. A persistent cost database is keyed on these hashes (CostKey::hash), so every
// user's tuning results are filed under them: if one of these literals has to change, that is a
// format break of the cost database. Bump the measured/roofline fingerprints' version, say so in
// docs/ (migration note: old databases are no longer hit), and only then update the literals.
TEST_CASE("the hash is pinned: literal values for fixed functions", "[ir]") {
  CHECK(hash_hex(structural_hash(function("", {1, 2, 3, 4}, {2, 1}))) == "b69d0dd93293f0c3");
  CHECK(hash_hex(structural_hash(function("z", {0, 0, 0, 0}, {-1, 1}))) == "544d62e1f79e55b9");
  CHECK(hash_hex(structural_hash(tessera::testing::collage_chain())) == "e4e7ca1a26d57d01");
  // collage_diamond's key is also in tests/cost_models/inputs/costs_v1.db, written by an older build.
  CHECK(hash_hex(structural_hash(tessera::testing::collage_diamond())) == "c198b5449dc3675c");
  CHECK(hash_hex(fnv1a64("tessera")) == "2646397bdaa180e2");
}

TEST_CASE("the cost database key of a fixed function is pinned", "[ir]") {
  MockCosts costs;
  costs.file = "<pinned>";
  costs.backends["byoc"].per_op = 1.0;
  costs.backends["tvm"].per_op = 2.0;
  MockCostModel model(costs);
  Graph fn = tessera::testing::collage_diamond();
  CostKey key = cost_key(model, CostRequest(fn, structural_hash(fn), "byoc", "cpu", "diamond", "1.0"));
  CHECK(key.to_string() == "c198b5449dc3675c byoc@1.0 cpu mock/1/952c4598182e867e");
}
