// Every file in tests/inputs/bad/ must be rejected with one clear line: FILE.expected holds a
// piece of the message. The importer is checked directly (a UserError with that text), and the
// CLI end to end (exit status 2, exactly one line on stderr, nothing on stdout).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "tessera/error.h"
#include "support/files.h"
#include "support/subprocess.h"
#include "frontend/test_util.h"

using namespace tessera;
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> bad_inputs() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator("tests/inputs/bad"))
    if (e.path().extension() == ".json" || e.path().extension() == ".onnx") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string expected_message(const fs::path& p) {
  std::string s = testing::read_file(p.string() + ".expected");
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

TEST_CASE("every bad input throws a UserError naming the file and what is wrong", "[frontend][bad]") {
  auto inputs = bad_inputs();
  REQUIRE(inputs.size() >= 15);
  for (const auto& p : inputs) {
    INFO(p.string());
    std::string expected = expected_message(p);
    try {
      load_model(p.string(), test::quiet());
      FAIL("accepted a bad input");
    } catch (const UserError& e) {
      std::string what = e.what();
      CHECK(what.rfind(p.string() + ": ", 0) == 0);
      CHECK_THAT(what, Catch::Contains(expected));
      CHECK(what.find('\n') == std::string::npos);
    }
  }
}

TEST_CASE("the CLI exits 2 with one line for every bad input", "[frontend][bad][cli]") {
  for (const auto& p : bad_inputs()) {
    INFO(p.string());
    testing::Process r = testing::run_command(testing::tessera_binary() + " info " + p.string());
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, Catch::Contains(expected_message(p)));
  }
}
