// The CLI's "wrote" lines. See cli_output.h.
#include "cli/cli_output.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "tessera/error.h"
#include "support/text.h"

namespace tessera::cli {

std::string cli_flag(const std::string& option) {
  if (option == "input_shapes") return "--input-shape";   // one flag per input, repeated
  if (option == "shape_ranges") return "--shape-range";   // one flag per input, repeated
  std::string flag = "--" + option;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

std::string cli_spelling(const OptionMention& mention) {
  const std::string flag = cli_flag(mention.option);
  std::string out;
  for (const auto& [name, dims] : mention.bindings) {
    out += (out.empty() ? "" : " ") + flag + " " + name + "=";
    if (dims.empty()) out += "...";
    for (size_t i = 0; i < dims.size(); ++i) out.append(i ? "x" : "").append(std::to_string(dims[i]));
  }
  return out.empty() ? flag : out;
}

std::string cli_message(const UserError& error) {
  if (error.option_name().empty()) return error.message(cli_spelling);
  return cli_flag(error.option_name()) + ": " + error.detail();
}

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
