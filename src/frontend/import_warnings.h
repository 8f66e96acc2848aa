// Import warnings, gathered during a load and printed after it in one voice (the CLI's
// ModelOptions::load, Model::load of the deployment API, and so the Python module):
//
//   warning: 24 weights of resnet18.onnx are not on disk: running with seeded random weights (--verbose lists them)
//
// A model exported without its weights (external data files left behind) makes the importer warn
// once per weight; those become one summary line, and only a verbose caller sees each. Every
// other warning (symbolic dimensions bound to 1, ...) is printed as it is. Lines go to stderr.
#pragma once

#include <string>
#include <vector>

namespace tessera {

class ImportWarnings {
 public:
  // `verbose_hint` is how this caller asks for the details ("--verbose", "verbose=True").
  ImportWarnings(std::string model_path, bool verbose, std::string verbose_hint = "--verbose")
      : model_(std::move(model_path)), verbose_(verbose), hint_(std::move(verbose_hint)) {}
  void add(const std::string& warning);
  // Prints what was gathered: every warning that is not about a missing weight, then (verbose:
  // each missing weight, then) one summary line; `runs` picks its ending.
  void print(bool runs) const;
  size_t missing_weights() const { return missing_.size(); }

 private:
  std::string model_;
  bool verbose_;
  std::string hint_;
  std::vector<std::string> other_, missing_;
};

}  // namespace tessera
