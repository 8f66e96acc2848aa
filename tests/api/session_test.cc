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
  CHECK_THAT(*plan_machine_mismatch(plan, 4, "p.json"),
             Catch::StartsWith("p.json: the plan was tuned at 1 thread on ") && Catch::Contains("this run uses 4 threads on"));
  plan.tuned_on->machine = "Some Other CPU/isa-00000000";
  CHECK_THAT(*plan_machine_mismatch(plan, 1, "p.json"), Catch::Contains("tuned at 1 thread on Some Other CPU/isa-00000000"));
}
