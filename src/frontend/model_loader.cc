#include "tessera/model_loader.h"

#include <filesystem>

#include "tessera/error.h"

namespace tessera {

Graph load_model(const std::string& path, const ImportOptions& options) {
  if (!std::filesystem::exists(path)) throw UserError(path, "", "no such file");
  std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".onnx") return import_onnx(path, options);
  if (ext == ".json") return import_json(path, options);
  throw UserError(path, "", "unknown model format '" + ext + "' (expected .onnx or .json)");
}

std::pair<std::string, Shape> parse_input_shape(const std::string& text, const std::string& flag) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UserError(flag, "'" + text + "'", "expected NAME=DxDxD, e.g. input=1x3x224x224");
  Shape shape;
  std::string dims = text.substr(eq + 1);
  size_t pos = 0;
  while (pos <= dims.size()) {
    size_t x = dims.find('x', pos);
    std::string d = dims.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    if (d.empty() || d.find_first_not_of("0123456789") != std::string::npos)
      throw UserError(flag, "'" + text + "'", "dimension '" + d + "' is not a positive integer");
    if (d.size() > 12) throw UserError(flag, "'" + text + "'", "dimension '" + d + "' is too large");
    // A zero dimension is an empty tensor: nothing to partition, and a model priced at nothing.
    if (std::stoll(d) == 0) throw UserError(flag, "'" + text + "'", "dimension '" + d + "' is not a positive integer");
    shape.push_back(std::stoll(d));
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  return {text.substr(0, eq), shape};
}

}  // namespace tessera
