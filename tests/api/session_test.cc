// The deployment API's checks on what it is given (include/tessera/session.h): an edited or foreign
// plan (a backend this build does not run, a node on a backend that cannot take it, opt-in
// fallback), a plan tuned elsewhere (runtime/plan_backends.h), and buffers of the wrong dtype.
#include <catch2/catch.hpp>

#include <cstring>

#include "runtime/plan_backends.h"
#include "search/partitioner.h"
#include "tessera/backend_spec.h"
#include "tessera/cost_model.h"
#include "tessera/error.h"
#include "cost_models/machine.h"
#include "tessera/session.h"
#include "search/shape_range.h"

using namespace tessera;

namespace {

const std::string kMlp = "data/models/tiny_mlp.json";   // mm0 add0 relu0 mm1 add1, x: f32[1, 16]

Plan roofline_plan(const Model& model) {
  PartitionOptions po;
  po.model_path = kMlp;
  const auto roofline = make_cost_model("roofline:data/devices/host.json");
  return partition_graph(model.graph(), resolve_backends({"ref", "onednn"}, {}), *roofline, po).plan;
}

std::string error_of(const Model& model, const Plan& plan, SessionOptions options = {}) {
  try {
    Session session(model, plan, options);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a Session refuses a partition on a backend this build does not run") {
  const Model model = Model::load(kMlp);
  Plan plan = roofline_plan(model);
  REQUIRE(error_of(model, plan).empty());
  plan.partitions[0].backend = "onednnn";
  CHECK_THAT(error_of(model, plan), Catch::Contains("partitions[0].backend: unknown backend 'onednnn' (backends that run here: "));
  CHECK_THAT(error_of(model, plan), Catch::Contains("onednn, "));
  plan.partitions[0].backend = "tvm";
  CHECK_THAT(error_of(model, plan), Catch::Contains("backend 'tvm' does not run on this machine"));
}

TEST_CASE("a node on a backend whose spec refuses it: an error, unless the fallback is allowed") {
  const Model model = Model::load(kMlp);
  Plan plan = roofline_plan(model);
  for (Partition& p : plan.partitions) p.backend = "blas";   // blas takes no Relu
  CHECK_THAT(error_of(model, plan), Catch::Contains("partitions[0].nodes: node 'relu0' cannot run on blas: op Relu is not in blas's spec"));
  CHECK_THAT(error_of(model, plan), Catch::Contains("allow a fallback to ref with allow_fallback)"));   // SessionOptions
  SessionOptions fallback;
  fallback.allow_fallback = true;
  Session session(model, plan, fallback);
  HostTensor x(model.inputs()[0].type);
  const auto out = session.run({{"x", x}});
  CHECK(out.size() == 1);
}

TEST_CASE("Session::run refuses an input of another dtype") {
  const Model model = Model::load(kMlp);
  Session session(model, roofline_plan(model));
  for (DType d : {DType::i32, DType::i64, DType::boolean, DType::u8, DType::f16}) {
    HostTensor x(TensorType{d, {1, 16}});
    INFO(dtype_name(d));
    CHECK_THROWS_WITH(session.run({{"x", x}}), Catch::Contains("input has type") && Catch::Contains("expected f32[1,16]"));
  }
}

TEST_CASE("a plan tuned at other threads or on another machine is one line, none when both agree") {
  const Model model = Model::load(kMlp);
  Plan plan = roofline_plan(model);
  CHECK_FALSE(plan_machine_mismatch(plan, 4, "p.json"));   // a plan that records nothing
  plan.tuned_on = PlanMachine{1, cpu_model_name(), machine_fingerprint()};
  CHECK_FALSE(plan_machine_mismatch(plan, 1, "p.json"));
  CHECK_THAT(plan_machine_mismatch(plan, 4, "p.json")->render(library_spelling),
             Catch::StartsWith("p.json: the plan was tuned at 1 thread on ") && Catch::Contains("this run uses 4 threads on") &&
                 Catch::EndsWith("(tune again here, or set threads to 1)"));
  plan.tuned_on->machine = "Some Other CPU/isa-00000000";
  CHECK_THAT(plan_machine_mismatch(plan, 1, "p.json")->render(library_spelling),
             Catch::Contains("tuned at 1 thread on Some Other CPU/isa-00000000"));
}

// A plan over shape ranges (src/search/shape_range.h): tuned per bucket, one Session for every shape.
TEST_CASE("a Session runs every shape inside a plan's ranges, each compiled once, and refuses others") {
  const std::string path = "tests/inputs/good/symbolic.onnx";   // x: [batch, 3, h, w] -> Conv 1x1 -> y
  const Model model = Model::load(path, {{"x", {1, 3, 8, 8}}});
  const ShapeBuckets buckets = make_shape_buckets({parse_shape_range("x=1x3x4x4:1x3x8x8:2x3x16x16", "f")}, {});
  REQUIRE(buckets.buckets.size() == 6);   // batch {1, 2} x h = w {4, 8, 16} (one range, one axis)
  const auto roofline = make_cost_model("roofline:data/devices/host.json");
  std::vector<Model> bound;
  std::vector<Plan> plans;
  for (const InputShapes& b : buckets.buckets) {
    bound.push_back(model.with_input_shapes({b.begin(), b.end()}));
    PartitionOptions po;
    po.model_path = path;
    plans.push_back(partition_graph(bound.back().graph(), resolve_backends({"ref", "onednn"}, {}), *roofline, po).plan);
  }
  std::vector<TunedBucket> tuned;
  for (size_t b = 0; b < plans.size(); ++b) tuned.push_back({buckets.buckets[b], &plans[b], &bound[b].graph()});
  const Plan plan = plan_from_json(nlohmann::json::parse(plan_set_to_json_text(buckets.ranges, tuned, buckets.primary)),
                                   "set.json", model.graph());
  CHECK(plan.bucket_exact);
  Session session(model, plan);
  CHECK(session.shapes_compiled() == 1);

  const Shape other{2, 3, 5, 12};   // between buckets: runs 2x3x16x16's plan at its own shape
  HostTensor x(TensorType{DType::f32, other});
  for (size_t i = 0; i < x.bytes.size() / 4; ++i) reinterpret_cast<float*>(x.bytes.data())[i] = float(i % 7) - 3;
  const std::map<std::string, HostTensor> out = session.run({{"x", x}});
  CHECK(out.at("y").type.shape == Shape{2, 4, 5, 12});
  CHECK(session.shapes_compiled() == 2);
  CHECK_FALSE(session.plan_at({other}).bucket_exact);
  // The same as a Session made for that shape alone.
  const Model exact = model.with_input_shapes({{"x", other}});
  PartitionOptions po;
  Session alone(exact, partition_graph(exact.graph(), resolve_backends({"ref"}, {}), *roofline, po).plan);
  const HostTensor want = alone.run({{"x", x}}).at("y");
  REQUIRE(want.bytes.size() == out.at("y").bytes.size());
  for (size_t i = 0; i < want.bytes.size() / 4; ++i)
    CHECK(reinterpret_cast<const float*>(out.at("y").bytes.data())[i] ==
          Approx(reinterpret_cast<const float*>(want.bytes.data())[i]).margin(1e-5));
  session.run({{"x", x}});
  CHECK(session.shapes_compiled() == 2);   // compiled once

  HostTensor big(TensorType{DType::f32, {1, 3, 32, 8}});
  try {
    session.run({{"x", big}});
    FAIL("a shape outside the range ran");
  } catch (const UserError& e) {
    CHECK_THAT(e.what(), Catch::Contains("dimension 2 of x=1x3x32x8 is 32, outside the plan's range 4..16"));
  }
  SessionOptions ahead;
  ahead.compile_ahead = true;
  CHECK(Session(model, plan, ahead).shapes_compiled() == 6);

  // Bounded: past max_shapes the least recently run shape is dropped, never the model's own, and
  // compiles again (with the same result) when it comes back.
  SessionOptions few;
  few.max_shapes = 2;
  Session bounded(model, plan, few);
  auto input = [](const Shape& shape) {
    HostTensor t(TensorType{DType::f32, shape});
    for (size_t i = 0; i < t.bytes.size() / 4; ++i) reinterpret_cast<float*>(t.bytes.data())[i] = float(i % 5) - 2;
    return t;
  };
  const HostTensor first = bounded.run({{"x", input({1, 3, 5, 5})}}).at("y");
  CHECK(bounded.shapes_compiled() == 2);
  bounded.run({{"x", input({2, 3, 6, 6})}});
  CHECK(bounded.shapes_compiled() == 2);   // 1x3x5x5 dropped; 1x3x8x8 (the model's own) kept
  bounded.run({{"x", input({1, 3, 8, 8})}});
  CHECK(bounded.shapes_compiled() == 2);
  const HostTensor again = bounded.run({{"x", input({1, 3, 5, 5})}}).at("y");
  CHECK(bounded.shapes_compiled() == 2);
  CHECK(again.bytes == first.bytes);
  SessionOptions none;
  none.max_shapes = 0;
  CHECK_THROWS_AS(Session(model, plan, none), UserError);
}

TEST_CASE("a plan for one shape is a range of one: another shape is refused, saying so") {
  const Model model = Model::load(kMlp);
  Session session(model, roofline_plan(model));
  HostTensor x(TensorType{DType::f32, {2, 16}});
  try {
    session.run({{"x", x}});
    FAIL("another shape ran");
  } catch (const UserError& e) {
    CHECK_THAT(e.what(), Catch::Contains("x: input has shape 2x16, the plan data/models/tiny_mlp.json was made for 1x16 only"));
  }
}
