// tessera's JSON graph import (tessera::import_json, format tessera.graph): any bytes as a .json
// model. Seeds: tests/fuzz/corpus/json_graph/.
#include "graph_check.h"
#include "tessera/model_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  const std::string path = fuzz::write_temp(fuzz::as_text(data, size), ".json");
  fuzz::expect_clean([&] { fuzz::check_loaded_graph(import_json(path, fuzz::checked_import_options())); });
  return 0;
}
