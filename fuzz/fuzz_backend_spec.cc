// Backend specs (tessera::parse_backend_spec, format tessera.backend): any text as a spec; a spec
// that loads must also build its partition rule and enumerate candidates on a small model
// (data/models/conv_block.json), as `tessera partition --backend-spec` does next.
// Seeds: tests/fuzz/corpus/backend_spec/.
#include "fuzz_target.h"
#include "tessera/backend_spec.h"
#include "backends/spec/candidate_space.h"
#include "partition/dataflow_index.h"
#include "tessera/model_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  static const Graph graph = load_model(fuzz::source_path("data/models/conv_block.json"));
  static const DataflowIndex index(graph);
  fuzz::expect_clean([&] {
    BackendSpec spec = parse_backend_spec(std::string(fuzz::as_text(data, size)), "spec.json");
    (void)enumerate_candidates(index, {spec});
  });
  return 0;
}
