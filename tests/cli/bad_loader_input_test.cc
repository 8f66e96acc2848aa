// Regression inputs for the loaders that are not models (tests/inputs/bad/<loader>/FILE, with
// FILE.expected holding a piece of the message): each is given to the CLI the way a user would
// and must be refused with exit 2 and one line containing the expected text. Models that must
// fail live in tests/inputs/bad/ itself (tests/frontend/bad_input_test.cc). Most of these came
// from fuzzing (docs/fuzzing.md).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>

#include "support/files.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;
using tessera::testing::Process;
using tessera::testing::read_file;
using tessera::testing::run_command;
using tessera::testing::TempDir;

TEST_CASE("bad specs, plans, costs, inputs and shapes exit 2 with one line", "[cli][bad]") {
  const std::string t = tessera::testing::tessera_binary();
  const std::string conv = "data/models/conv_block.json";
  TempDir dir;
  const std::string plan = dir.file("conv.plan.json");
  REQUIRE(run_command(t + " partition " + conv + " --backends ref --cost roofline --plan " + plan).exit_code == 0);
  // FILE stands for the bad input.
  const std::map<std::string, std::string> commands = {
      {"backend_spec", t + " partition " + conv + " --backends ref --backend-spec FILE --cost roofline"},
      {"mock_costs", t + " partition " + conv + " --backends ref --cost mock:FILE"},
      {"plan", t + " run " + conv + " --plan FILE --repeat 1"},
      {"npy", t + " run " + conv + " --plan " + plan + " --input x=FILE --repeat 1"},
      {"input_shape", t + " info tests/fuzz/corpus/onnx/maxpool_symbolic.onnx --input-shape $(cat FILE)"},
  };
  // No cost_db/: a cost database's corrupt lines are skipped and counted, never refused
  // (tests/cost_models/cost_database_test.cc), so no database file exits 2.
  int checked = 0;
  for (const auto& [loader, command] : commands) {
    INFO("tests/inputs/bad/" << loader);
    REQUIRE(fs::is_directory("tests/inputs/bad/" + loader));   // a loader listed here has inputs
    const int before = checked;
    for (const auto& e : fs::directory_iterator("tests/inputs/bad/" + loader)) {
      if (e.path().extension() == ".expected") continue;
      INFO(e.path().string());
      std::string cmd = command;
      for (size_t at; (at = cmd.find("FILE")) != std::string::npos;) cmd.replace(at, 4, e.path().string());
      const Process p = run_command(cmd);
      std::string expected = read_file(e.path().string() + ".expected");
      while (!expected.empty() && expected.back() == '\n') expected.pop_back();
      CHECK(p.exit_code == 2);
      CHECK(std::count(p.err.begin(), p.err.end(), '\n') == 1);
      CHECK_THAT(p.err, Catch::Contains(expected));
      ++checked;
    }
    CHECK(checked > before);
  }
  CHECK(checked >= 15);   // the inputs committed today; more are welcome
}

TEST_CASE("names from a model are escaped in the CLI's message", "[cli][bad]") {
  // The node is named "relu\x01\x1b[31m" (a control byte and a terminal colour escape).
  const Process p = run_command(tessera::testing::tessera_binary() + " info tests/inputs/bad/control_bytes_in_name.json");
  CHECK(p.exit_code == 2);
  CHECK_THAT(p.err, Catch::Contains("node 'relu\\x01\\x1b[31m': input 0 'nowhere' is not defined"));
}
