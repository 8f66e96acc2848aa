// The tessera.plan v1 writer and reader: fixed number format, round trip, rejection of bad files.
#include <catch2/catch.hpp>
#include <fstream>

#include "partition/test_graphs.h"
#include "search/search_fixture.h"
#include "tessera/error.h"
#include "support/collage_graphs.h"
#include "support/files.h"
#include "support/temp_dir.h"

using namespace tessera;
using namespace tessera::testing;

TEST_CASE("plan numbers have one fixed format", "[search][plan]") {
  CHECK(format_plan_number(34.5706) == "34.5706");
  CHECK(format_plan_number(0.0) == "0.0");
  CHECK(format_plan_number(-0.0) == "0.0");
  CHECK(format_plan_number(24.570600000000002) == "24.5706");
  CHECK(format_plan_number(2.0) == "2.0");
  CHECK(format_plan_number(1.25e-7) == "1.25e-07");
}

TEST_CASE("a plan survives write, read, write byte for byte", "[search][plan]") {
  const Graph g = collage_chain();
  std::vector<BackendSpec> backends{collage_backend("tvm", 1), collage_backend("byoc", 3)};
  auto costs = mock_costs({{"tvm", 2.0}, {"byoc", 1.0}});
  PartitionOutcome out = run_search(g, backends, costs);
  std::string text = plan_to_json_text(out.plan, g);
  CHECK(text.find("\"total_cost\": 4.9,") != std::string::npos);
  CHECK(text.find("\"search_ms\": 0.0") != std::string::npos);
  CHECK(text.find("\"composites\": [{\"name\": \"byoc.relu\"") != std::string::npos);
  Plan back = plan_from_json(nlohmann::json::parse(text), "p.json", g);
  CHECK(plan_to_json_text(back, g) == text);
  REQUIRE(back.partitions.size() == 3);
  CHECK(back.partitions[2].nodes == IndexSet(4, {2, 3}));

  TempDir dir;
  const std::string path = dir.file("plan.json");
  write_plan_file(path, out.plan, g);
  CHECK(read_file(path) == text);
  CHECK(plan_to_json_text(read_plan_file(path, g), g) == text);
}

TEST_CASE("bad plan files are user errors naming the place", "[search][plan]") {
  GraphBuilder b;
  b.output(b.op("Relu", "r0", {b.input("x")}));
  auto parse = [&](const std::string& s) { return plan_from_json(nlohmann::json::parse(s), "p.json", b.g); };
  const std::string head = R"({"format": "tessera.plan", "version": 1, "model": "m", "search": "collage",
     "cost_model": "mock", "total_cost": 1.0, "transfer_cost": 0.0, "partitions": )";
  CHECK_THROWS_WITH(parse(head + R"([{"backend": "ref", "nodes": ["zz"], "cost": 1.0, "function": "f"}]})"),
                    "p.json: partitions[0].nodes[0]: no node 'zz' in the model");
  CHECK_THROWS_WITH(parse(head + R"([{"backend": "ref", "nodes": ["r0"], "cost": 1.0, "function": "f"},
                                     {"backend": "ref", "nodes": ["r0"], "cost": 1.0, "function": "f"}]})"),
                    "p.json: partitions[1].nodes: node 'r0' is already in another partition");
  CHECK_THROWS_AS(parse(R"({"format": "tessera.graph", "version": 1})"), UserError);
  // A partition whose cost is "unknown" reads as the Unknown state, not as an error or a number.
  Plan unknown = parse(head + R"([{"backend": "ref", "nodes": ["r0"], "cost": "unknown", "function": "f"}]})");
  REQUIRE(unknown.partitions.size() == 1);
  CHECK(unknown.partitions[0].cost.is_unknown());
  CHECK(unknown.partitions[0].nodes == IndexSet(1, {0}));
  CHECK(unknown.total_cost == Cost::value(1.0));
}

TEST_CASE("a plan whose partitions form a cycle is refused at reading, naming the cycle", "[search][plan]") {
  // x -> a -> b -> c: {a, c} feeds b and b feeds {a, c}; a third partition {d} hangs off c.
  GraphBuilder b;
  ValueId c = b.op("Relu", "c", {b.op("Relu", "b", {b.op("Relu", "a", {b.input("x")})})});
  b.output(b.op("Relu", "d", {c}));
  auto parse = [&](const std::string& s) { return plan_from_json(nlohmann::json::parse(s), "p.json", b.g); };
  const std::string head = R"({"format": "tessera.plan", "version": 1, "model": "m", "search": "collage",
     "cost_model": "mock", "total_cost": 1.0, "transfer_cost": 0.0, "partitions": )";
  CHECK_THROWS_WITH(parse(head + R"([{"backend": "ref", "nodes": ["d"], "cost": 1.0, "function": "f"},
                                     {"backend": "ref", "nodes": ["a", "c"], "cost": 1.0, "function": "f"},
                                     {"backend": "eigen", "nodes": ["b"], "cost": 1.0, "function": "g"}]})"),
                    "p.json: partitions: the partitions form a cycle (partitions[1] -> partitions[2] -> partitions[1]): "
                    "no order runs them; every partition must only read what earlier ones made");
  Plan fine = parse(head + R"([{"backend": "ref", "nodes": ["a", "b", "c"], "cost": 1.0, "function": "f"},
                              {"backend": "ref", "nodes": ["d"], "cost": 1.0, "function": "f"}]})");
  CHECK(fine.partitions.size() == 2);
}

TEST_CASE("a plan is bound to its model: other shapes or another model are refused", "[search][plan]") {
  auto relu = [](Shape shape, const char* op) {
    GraphBuilder b;
    b.output(b.op(op, "r0", {b.input("x", shape)}, shape));
    b.g.source = "m.onnx";
    return b.g;
  };
  const Graph g = relu({1, 8}, "Relu");
  Plan plan;
  plan.model = "m.onnx";
  plan.search = "collage";
  plan.cost_model = "mock";
  Partition p;
  p.backend = "ref";
  p.device = "cpu";
  p.nodes = IndexSet(1, {0});
  p.cost = Cost::value(2.5);
  plan.partitions.push_back(p);
  finalize_plan_order(plan, g);
  const std::string text = plan_to_json_text(plan, g);
  CHECK(text.find("\"model_fingerprint\": \"" + model_fingerprint(g) + "\", \"input_shapes\": {\"x\": [1, 8]},\n") !=
        std::string::npos);
  auto parse = [&](const Graph& model) { return plan_from_json(nlohmann::json::parse(text), "p.json", model); };
  Plan back = parse(g);
  CHECK(back.model_fingerprint == model_fingerprint(g));
  CHECK(back.input_shapes == std::vector<std::pair<std::string, Shape>>{{"x", {1, 8}}});
  CHECK(plan_to_json_text(back, g) == text);

  CHECK_THROWS_WITH(parse(relu({1, 4}, "Relu")),
                    "p.json: input_shapes.x: the plan was made for x=1x8, the model m.onnx has x=1x4 (load the model "
                    "with input_shapes[\"x\"] = {1, 8}, or make a plan for these shapes)");
  CHECK_THROWS_WITH(parse(relu({1, 8}, "Sigmoid")),
                    Catch::Matchers::StartsWith("p.json: model_fingerprint: the plan was made for another model"));
  // A plan without the fields (older, or hand-written) is accepted unchecked.
  nlohmann::json old = nlohmann::json::parse(text);
  old.erase("model_fingerprint");
  old.erase("input_shapes");
  Plan unchecked = plan_from_json(old, "p.json", relu({1, 8}, "Sigmoid"));
  CHECK(unchecked.model_fingerprint.empty());
  CHECK(unchecked.input_shapes.empty());
  REQUIRE(unchecked.partitions.size() == 1);
  CHECK(unchecked.partitions[0].nodes == IndexSet(1, {0}));
  CHECK(unchecked.partitions[0].cost == Cost::value(2.5));
  CHECK(unchecked.total_cost == back.total_cost);
}
