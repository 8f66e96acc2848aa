// Boundary layouts in the executor (lowered_program.h): a plan that hands 4-D values between
// onednn, xnnpack and ref converts exactly where two layouts meet, and computes what ref does.
#include <catch2/catch.hpp>

#include <map>

#include "emit/emit_test_util.h"
#include "runtime/call_profile.h"
#include "runtime/executor.h"
#include "runtime/model_data.h"
#include "runtime/ref_check.h"

using namespace tessera;

TEST_CASE("boundary layouts: conversions only where layouts meet, and --check holds", "[layout]") {
  // conv_block: x -> conv0 -> relu0 -> conv1 -> add0(+x) -> relu1 -> y, all f32[1,8,16,16].
  Graph g = load_model("data/models/conv_block.json");
  Plan plan = test::hand_plan(g, {{"onednn", {"conv0"}}, {"xnnpack", {"relu0", "conv1"}}, {"ref", {"add0"}}, {"onednn", {"relu1"}}});
  Executor executor(g, plan);
  REQUIRE(executor.codegen_skipped().empty());
  CheckReport report = check_against_ref(executor, model_inputs(g, 0));
  INFO(report.first_failure());
  CHECK(report.ok);
  CHECK(report.partitions.size() >= 4);   // every call's outputs compared, NHWC ones converted for it

  std::map<std::string, std::string> conversions;   // value -> kernel
  for (const CallProfile& c : profile_calls(executor, model_inputs(g, 0), 1))
    if (c.kernel.starts_with("layout.")) conversions[c.label] = c.kernel;
  // c0 goes from onednn to xnnpack in NHWC as is; c1 leaves xnnpack for ref; s0 leaves ref for
  // onednn. The graph input x enters onednn plain and the graph output y leaves it plain: the
  // functions take and give them as the caller does (codegen.h).
  CHECK(conversions == std::map<std::string, std::string>{{"c1", "layout.nhwc->plain"}, {"s0", "layout.plain->nhwc"}});
  std::vector<HostTensor> first = executor.run(model_inputs(g, 0));
  std::vector<HostTensor> again = executor.run(model_inputs(g, 0));
  CHECK(first[0].bytes == again[0].bytes);
}
