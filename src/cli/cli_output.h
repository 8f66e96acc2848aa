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

#include "frontend/import_warnings.h"
#include "tessera/error.h"
#include "tessera/tune.h"

namespace tessera::cli {

// A user error as the CLI prints it: an option error (UserError::option) names the option as
// its flag ("backends" -> "--backends", "max_rel_error" -> "--max-rel-error"), and so does a
// message that mentions options (UserError::mentioning, cli_spelling); any other error is its
// message.
std::string cli_message(const UserError& error);
// The CLI's flag for one of the library's options: "--" and dashes for underscores, except
// input_shapes, which is "--input-shape", given once per input.
std::string cli_flag(const std::string& option);
// A mention as the CLI writes it: "--input-shape x=1x3x224x224 --input-shape y=...", or the flag alone.
std::string cli_spelling(const OptionMention& mention);

// "wrote PATH" on stderr.
void note_written(const std::string& path);

// Creates the output directory `dir` given by option `flag` (and its parents), before anything
// runs; a UserError naming both when it cannot.
void make_output_dir(const std::string& flag, const std::string& dir);

// What the tuning pipeline recorded (tune.h), on stderr: the search's limits as warnings, the
// contenders the accuracy budget ruled out, then the end-to-end race and the in-plan price under
// "end to end, T threads:" (`threads`: the compute threads they ran with).
void print_tune_record(const TunedPlan& tuned, int threads);

// Import warnings: tessera::ImportWarnings (import_warnings.h), shared with the deployment API.
using tessera::ImportWarnings;

}  // namespace tessera::cli
