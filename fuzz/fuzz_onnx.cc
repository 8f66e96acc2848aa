// ONNX import (tessera::import_onnx): any bytes as a .onnx file. Seeds: tests/fuzz/corpus/onnx/.
#include "graph_check.h"
#include "tessera/model_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  const std::string path = fuzz::write_temp(fuzz::as_text(data, size), ".onnx");
  fuzz::expect_clean([&] { fuzz::check_loaded_graph(import_onnx(path, fuzz::checked_import_options())); });
  return 0;
}
