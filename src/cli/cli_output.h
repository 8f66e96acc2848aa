// What the CLI says about what it did, in one voice for every subcommand.
//
//   wrote out/plan.json                                        one line per file written (stderr)
//   warning: 24 weights of resnet18.onnx are not on disk: running with seeded random weights
//
// Quiet by default: the import's one warning per missing external weight becomes one summary line;
// --verbose prints the details as well. Lines go to stderr, so stdout stays the command's result
// (tables, JSON) and can be piped.
#pragma once

#include <string>
#include <vector>

namespace tessera::cli {

// "wrote PATH" on stderr.
void note_written(const std::string& path);

// Import warnings, gathered during a load and printed after it (ModelOptions::load).
class ImportWarnings {
 public:
  ImportWarnings(std::string model_path, bool verbose) : model_(std::move(model_path)), verbose_(verbose) {}
  void add(const std::string& warning);
  // Prints what was gathered: every warning that is not about a missing weight, then (with
  // --verbose, each missing weight, then) one summary line; `runs` picks its ending.
  void print(bool runs) const;
  size_t missing_weights() const { return missing_.size(); }

 private:
  std::string model_;
  bool verbose_;
  std::vector<std::string> other_, missing_;
};

}  // namespace tessera::cli
