// Helpers shared by the frontend tests.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tessera/model_loader.h"

namespace tessera::test {

inline ImportOptions quiet() {
  return ImportOptions{.warn = [](const std::string&) {}};
}

// Every tracked model in data/models (PaddleOCR's are optional and tested separately).
inline std::vector<std::string> bundled_models() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator("data/models")) {
    auto ext = e.path().extension();
    if (ext == ".onnx" || ext == ".json") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tessera::test
