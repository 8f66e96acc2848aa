// Mock cost files (tessera::parse_mock_costs, format tessera.mock_costs): any text as a file; a
// file that loads must price every backend it names on a small model's nodes.
// Seeds: tests/fuzz/corpus/mock_costs/.
#include "fuzz_target.h"
#include "cost_models/mock_cost_model.h"
#include "tessera/model_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  static const Graph graph = load_model(fuzz::source_path("data/models/conv_block.json"));
  fuzz::expect_clean([&] {
    MockCosts costs = parse_mock_costs(fuzz::as_text(data, size), "costs.json");
    for (const auto& [name, backend] : costs.backends) (void)mock_cost(backend, graph);
    MockCostModel model(costs);
    (void)model.fingerprint();
  });
  return 0;
}
