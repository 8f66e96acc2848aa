// What the CLI says about what it did, in one voice for every subcommand.
//
//   wrote out/plan.json                                        one line per file written (stderr)
//   warning: 24 weights of resnet18.onnx are not on disk: running with seeded random weights
//
// Quiet by default: the import's one warning per missing external weight becomes one summary line
// (import_warnings.h); --verbose prints the details as well. Lines go to stderr, so stdout stays
// the command's result (tables, JSON) and can be piped.
#pragma once

#include <string>

#include "tessera/import_warnings.h"

namespace tessera::cli {

// "wrote PATH" on stderr.
void note_written(const std::string& path);

// Import warnings: tessera::ImportWarnings (import_warnings.h), shared with the deployment API.
using tessera::ImportWarnings;

}  // namespace tessera::cli
