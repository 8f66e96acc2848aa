// Loading a model: ONNX (.onnx) or tessera's JSON graph (.json, format "tessera.graph").
//
// Both importers produce the same frozen Graph: nodes in topological order, unique node names,
// Constant nodes folded into constants, every value with a static TensorType (ONNX's own shape
// inference fills in what the file does not say; symbolic dimensions are bound from
// ImportOptions::input_shapes, and an unbound one becomes 1 with a warning naming it). ONNX
// graphs are then simplified (src/frontend/simplify.h: no-op nodes removed, BatchNormalization folded).
// Any defect of the file throws UserError("FILE: PLACE: WHAT").
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tessera/error.h"
#include "tessera/graph.h"

namespace tessera {

struct SimplifyReport;   // src/frontend/simplify.h

// An input whose symbolic dimensions no input_shapes binding bound, so the importer bound them to 1
// (ONNX): per dimension its value or its symbol ("?" when unnamed).
struct SymbolicInput {
  std::string name;
  std::vector<std::string> dims;
  std::vector<bool> symbolic;
};

struct ImportOptions {
  std::map<std::string, Shape> input_shapes;              // {"x": {1, 3, 224, 224}}
  std::function<void(const std::string&)> warn;           // null = print "warning: ..." to stderr
  OptionSpelling spelling;                                // how warnings name options (null: as the library, error.h)
  bool simplify = true;                                   // ONNX: simplify_graph after import (simplify.h)
  SimplifyReport* simplified = nullptr;                   // when set, receives what simplify_graph did
  std::vector<SymbolicInput>* symbolic = nullptr;         // when set, receives the inputs bound to 1
};

Graph load_model(const std::string& path, const ImportOptions& options = {});
Graph import_onnx(const std::string& path, const ImportOptions& options = {});
Graph import_json(const std::string& path, const ImportOptions& options = {});

// Parses "name=1x3x224x224" (the --input-shape syntax); throws UserError naming `flag` on error.
std::pair<std::string, Shape> parse_input_shape(const std::string& text, const std::string& flag);

}  // namespace tessera
