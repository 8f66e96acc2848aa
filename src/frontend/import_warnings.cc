// The missing-weight summary of import warnings. See import_warnings.h.
#include "frontend/import_warnings.h"

#include <cstdio>
#include <filesystem>

#include "support/plural.h"
#include "support/text.h"

namespace tessera {
namespace {
// The import's warning for a weight whose external data file is absent (src/frontend/onnx_tensor.cc).
bool is_missing_weight(const std::string& w) {
  return w.rfind("external data file '", 0) == 0 && w.find("is missing; its constants are shape-only") != std::string::npos;
}
}  // namespace

void ImportWarnings::add(const std::string& warning) {
  (is_missing_weight(warning) ? missing_ : other_).push_back(warning);
}

void ImportWarnings::print(bool runs) const {
  for (const std::string& w : other_) std::fprintf(stderr, "warning: %s\n", printable(w).c_str());
  if (missing_.empty()) return;
  if (verbose_)
    for (const std::string& w : missing_) std::fprintf(stderr, "warning: %s\n", printable(w).c_str());
  const std::string file = std::filesystem::path(model_).filename().string();
  const std::string ask = verbose_ ? "" : " (" + hint_ + " lists them)";
  std::fprintf(stderr, "warning: %s of %s %s not on disk: %s%s\n",
               count_of(missing_.size(), "weight").c_str(), printable(file).c_str(), missing_.size() == 1 ? "is" : "are",
               runs ? "running with seeded random weights" : "their shapes are enough to partition; runs use seeded random weights",
               printable(ask).c_str());
}

}  // namespace tessera
