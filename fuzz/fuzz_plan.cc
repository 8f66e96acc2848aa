// Plan files (tessera::read_plan_file, format tessera.plan) for a fixed model
// (data/models/conv_block.json): any bytes as a plan. A plan that reads is checked (check_plan:
// coverage, convexity, acyclicity, backends) as tests and `tessera run` do. Running mutated plans
// end to end is the mutation probe's part (tests/cli/mutation_probe_test.cc): emit pulls in every
// backend's compiler, too slow for a fuzzing loop. Seeds: tests/fuzz/corpus/plan/.
#include <set>

#include "fuzz_target.h"
#include "search/plan_check.h"
#include "tessera/backend_spec.h"
#include "partition/dataflow_index.h"
#include "tessera/model_loader.h"
#include "tessera/plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  static const Graph graph = load_model(fuzz::source_path("data/models/conv_block.json"));
  static const DataflowIndex index(graph);
  const std::string path = fuzz::write_temp(fuzz::as_text(data, size), ".plan.json");
  fuzz::expect_clean([&] {
    Plan plan = read_plan_file(path, graph);
    std::set<std::string> names;
    for (const Partition& p : plan.partitions) names.insert(p.backend);
    std::vector<BackendSpec> backends = resolve_backends({names.begin(), names.end()}, {});
    (void)check_plan(plan, index, backends);   // a reason or nothing: both fine
  });
  return 0;
}
