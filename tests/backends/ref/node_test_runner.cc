// The node-test runners' shared command line and floor (see node_test_runner.h).
#include "backends/ref/node_test_runner.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iostream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace tessera::oracle {

void add_runner_options(CLI::App& app, RunnerOptions& opt) {
  app.add_option("--expected", opt.expected, "committed list of the cases expected to pass")->required();
  app.add_option("--data", opt.data, "node test directory (default: libonnx-testdata's)");
  app.add_option("--filter", opt.filter, "run only cases whose name contains this");
  app.add_flag("--verbose", opt.verbose, "print every case's verdict");
  app.add_option("--write-expected", opt.write_expected, "write this run's passing cases as the list");
}

std::optional<int> start_runner(CLI::App& app, const RunnerOptions& opt, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    read_expected_passes(opt.expected);
  } catch (const std::runtime_error& e) {
    std::cerr << app.get_name() << ": " << e.what() << "\n";
    return 2;
  }
  if (!fs::is_directory(opt.data)) {
    std::cerr << app.get_name() << ": " << opt.data << " not found (install libonnx-testdata); skipping\n";
    return 77;
  }
  return std::nullopt;
}

std::vector<fs::path> case_dirs(const RunnerOptions& opt) {
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(opt.data))
    if (e.is_directory() && e.path().filename().string().find(opt.filter) != std::string::npos) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

std::set<std::string> read_expected_passes(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the list of expected passes");
  std::set<std::string> names;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    line = line.substr(0, line.find('#'));
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (line.empty()) continue;
    if (line.rfind("test_", 0) != 0 || line.find(' ') != std::string::npos)
      throw std::runtime_error(path + ":" + std::to_string(line_no) + ": not a node test name: '" + line + "'");
    names.insert(line);
  }
  return names;
}

Floor::Floor(const RunnerOptions& opt) : expected_(read_expected_passes(opt.expected)) {}

void Floor::record(const CaseResult& r, bool verbose) {
  seen_.insert(r.name);
  const bool listed = expected_.count(r.name) > 0;
  if (r.verdict == Verdict::Passed) ++passed, passes_.push_back(r.name);
  if (r.verdict == Verdict::Failed) ++failed;
  if (r.verdict == Verdict::Skipped) ++skipped;
  if (r.verdict == Verdict::Failed) std::cout << "FAIL " << r.name << ": " << r.reason << "\n";
  else if (r.verdict == Verdict::Skipped && listed) std::cout << "FAIL " << r.name << " (expected to pass) skipped: " << r.reason << "\n";
  else if (verbose) std::cout << (r.verdict == Verdict::Passed ? "pass " : "skip ") << r.name << (r.reason.empty() ? "" : ": " + r.reason) << "\n";
  if (listed && r.verdict != Verdict::Passed) regressed_.push_back(r.name);
  if (!listed && r.verdict == Verdict::Passed) unlisted_.push_back(r.name);
}

int Floor::finish(const RunnerOptions& opt, const std::string& backend) {
  size_t missing = 0;
  for (const std::string& name : expected_)
    if ((opt.filter.empty() || name.find(opt.filter) != std::string::npos) && !seen_.count(name)) {
      std::cout << "FAIL " << name << " (expected to pass): not in " << opt.data << "\n";
      ++missing;
    }
  std::cout << "expected to pass (" << opt.expected << "): " << expected_.size() << "; " << regressed_.size()
            << " of them failed or skipped, " << missing << " missing\n";
  if (!unlisted_.empty()) {
    std::cout << "passing but not listed (--write-expected adds them): ";
    for (size_t i = 0; i < unlisted_.size() && i < 10; ++i) std::cout << (i ? ", " : "") << unlisted_[i];
    std::cout << (unlisted_.size() > 10 ? ", ...\n" : "\n");
  }
  if (!opt.write_expected.empty()) {
    std::ofstream out(opt.write_expected);
    out << "# ONNX node tests (libonnx-testdata) expected to pass on the " << backend
        << " backend; ctest fails when\n# one of them fails or skips. Regenerate: " << backend
        << "_onnx_node_tests --expected FILE --write-expected FILE\n";
    for (const std::string& name : passes_) out << name << "\n";
  }
  return failed == 0 && regressed_.empty() && missing == 0 && passed > 0 ? 0 : 1;
}

}  // namespace tessera::oracle
