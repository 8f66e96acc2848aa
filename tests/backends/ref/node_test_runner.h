// What the ONNX node-test runners (ref_onnx_node_tests, xnnpack_onnx_node_tests) share: their
// command line, the case directories, and the floor they are held to.
//
//   RunnerOptions opt;  CLI::App app{...};  add_runner_options(app, opt);  (plus the runner's own)
//   if (auto status = start_runner(app, opt, argc, argv)) return *status;   // usage, list, data
//   Floor floor(opt);
//   for (const auto& dir : case_dirs(opt)) floor.record(run_case(dir, ...), opt.verbose);
//   std::cout << "ONNX node tests: " << floor.passed << " passed, ...\n";
//   return floor.finish(opt, "ref");
//
// The floor is a committed list of the cases expected to pass on the backend, one name per line
// ('#' starts a comment). A run fails (exit 1) when any case fails, and when a listed case skips or
// is missing, so a change that turns passes into skips is caught; a case that passes without being
// listed is reported (--write-expected writes this run's passes as the list) but does not fail.
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backends/ref/onnx_node_case.h"

namespace tessera::oracle {

struct RunnerOptions {
  std::string data = "/usr/share/libonnx-testdata/data/node", filter, expected, write_expected;
  bool verbose = false;
};

// --expected LIST (required), --data DIR, --filter SUBSTRING, --verbose, --write-expected FILE.
void add_runner_options(CLI::App& app, RunnerOptions& opt);

// Parses argv, reads the list and looks for the data directory. Returns the exit status when the
// run should stop there: 0 after --help, 2 on bad usage or an unreadable or malformed list, 77
// (ctest's skip) when the data directory does not exist; nullopt to go on.
std::optional<int> start_runner(CLI::App& app, const RunnerOptions& opt, int argc, char** argv);

// The test_<name> directories under opt.data whose name contains opt.filter, sorted.
std::vector<std::filesystem::path> case_dirs(const RunnerOptions& opt);

// The list: throws std::runtime_error ("PATH: ..." or "PATH:LINE: ...") when it cannot be read or
// a line is not a test name.
std::set<std::string> read_expected_passes(const std::string& path);

class Floor {
 public:
  explicit Floor(const RunnerOptions& opt);   // reads opt.expected (read_expected_passes)

  // Counts one case. Prints "FAIL name: why" for a failure and for a listed case that skipped; with
  // `verbose`, "pass name" and "skip name: why" for the others.
  void record(const CaseResult& r, bool verbose);
  // Prints the listed cases the run did not find, the list's summary and the unlisted passes,
  // writes opt.write_expected when given (with `backend` in its header), and returns the exit
  // status: 0 when nothing failed, no listed case skipped or is missing, and something passed.
  int finish(const RunnerOptions& opt, const std::string& backend);

  size_t listed() const { return expected_.size(); }
  int passed = 0, failed = 0, skipped = 0;

 private:
  std::set<std::string> expected_, seen_;
  std::vector<std::string> passes_, regressed_, unlisted_;
};

}  // namespace tessera::oracle
