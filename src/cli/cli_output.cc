// The CLI's "wrote" lines. See cli_output.h.
#include "cli/cli_output.h"

#include <cstdio>
#include <filesystem>
#include <system_error>

#include "tessera/error.h"
#include "support/text.h"

namespace tessera::cli {

void note_written(const std::string& path) { std::fprintf(stderr, "wrote %s\n", printable(path).c_str()); }

void make_output_dir(const std::string& flag, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw UserError(flag, dir, "cannot create this directory: " + ec.message());
}

void print_tune_record(const TunedPlan& tuned, int threads) {
  for (const std::string& l : tuned.record.limits) std::fprintf(stderr, "tessera: warning: %s\n", printable(l).c_str());
  for (const std::string& n : tuned.record.notes) std::fprintf(stderr, "tessera: %s\n", n.c_str());
  const std::vector<std::string> lines = describe_record(tuned);
  if (!lines.empty()) std::fprintf(stderr, "tessera: end to end, %d thread%s:\n", threads, threads == 1 ? "" : "s");
  for (const std::string& l : lines) std::fprintf(stderr, "  %s\n", l.c_str());
}

}  // namespace tessera::cli
