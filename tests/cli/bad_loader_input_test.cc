// Regression inputs for the loaders that are not models (tests/inputs/bad/<loader>/FILE, with
// FILE.expected holding a piece of the message): each is given to the CLI the way a user would
// and must be refused with exit 2 and one line containing the expected text. Models that must
// fail live in tests/inputs/bad/ itself (tests/frontend/bad_input_test.cc). Most of these came
// from fuzzing (docs/fuzzing.md).
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("bad specs, plans, costs, databases and inputs exit 2 with one line", "[cli][bad]") {
  const std::string t = std::string(TESSERA_BINARY_DIR) + "/tessera";
  const std::string conv = "data/models/conv_block.json";
  const fs::path dir = fs::temp_directory_path() / ("tessera_bad_loader_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string plan = (dir / "conv.plan.json").string();
  REQUIRE(std::system((t + " partition " + conv + " --backends ref --cost roofline --plan " + plan + " >/dev/null").c_str()) == 0);
  // FILE stands for the bad input.
  const std::map<std::string, std::string> commands = {
      {"backend_spec", t + " partition " + conv + " --backends ref --backend-spec FILE --cost roofline"},
      {"mock_costs", t + " partition " + conv + " --backends ref --cost mock:FILE"},
      {"plan", t + " run " + conv + " --plan FILE --repeat 1"},
      {"npy", t + " run " + conv + " --plan " + plan + " --input x=FILE --repeat 1"},
      {"cost_db", t + " cache stats FILE"},
      {"input_shape", t + " info tests/fuzz/corpus/onnx/maxpool_symbolic.onnx --input-shape $(cat FILE)"},
  };
  int checked = 0;
  for (const auto& [loader, command] : commands) {
    if (!fs::exists("tests/inputs/bad/" + loader)) continue;
    for (const auto& e : fs::directory_iterator("tests/inputs/bad/" + loader)) {
      if (e.path().extension() == ".expected") continue;
      INFO(e.path().string());
      std::string cmd = command;
      for (size_t at; (at = cmd.find("FILE")) != std::string::npos;) cmd.replace(at, 4, e.path().string());
      int status = std::system((cmd + " >/dev/null 2>" + (dir / "err").string()).c_str());
      std::string err = read_text(dir / "err");
      std::string expected = read_text(e.path().string() + ".expected");
      while (!expected.empty() && expected.back() == '\n') expected.pop_back();
      CHECK(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 2);
      CHECK(std::count(err.begin(), err.end(), '\n') == 1);
      CHECK_THAT(err, Catch::Contains(expected));
      ++checked;
    }
  }
  CHECK(checked >= 6);
  fs::remove_all(dir);
}

TEST_CASE("names from a model are escaped in the CLI's message", "[cli][bad]") {
  // The node is named "relu\x01\x1b[31m" (a control byte and a terminal colour escape).
  const std::string t = std::string(TESSERA_BINARY_DIR) + "/tessera";
  const fs::path err = fs::temp_directory_path() / ("tessera_escape_" + std::to_string(::getpid()));
  int status = std::system((t + " info tests/inputs/bad/control_bytes_in_name.json 2>" + err.string()).c_str());
  CHECK(WEXITSTATUS(status) == 2);
  CHECK_THAT(read_text(err), Catch::Contains("node 'relu\\x01\\x1b[31m': input 0 'nowhere' is not defined"));
  fs::remove(err);
}
