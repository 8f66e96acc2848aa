// What a newcomer meets in the first hour, each checked through the CLI as a user runs
// it: usage errors that are errors, one option name per concept, quiet warnings, "wrote" lines,
// costs in milliseconds, plurals, titles, and docs that match the output and stay in the clone.
// The roofline profile that fits this machine has its own test (host_profile_cli_test.cc).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "support/files.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

using namespace tessera::testing;
namespace fs = std::filesystem;

namespace {

const std::string kMlp = "data/models/tiny_mlp.json";   // input x: f32 [1, 16]

Process cli(const std::string& args) { return run_command(tessera_binary() + " " + args); }

// A command that must succeed; a failure shows the command and its stderr.
Process cli_ok(const std::string& args) {
  Process p = cli(args);
  INFO("tessera " << args << "\n" << p.err);
  REQUIRE(p.exit_code == 0);
  return p;
}

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

size_t count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("bench: a misspelt backend in --combos is a usage error, not a row of the table") {
  Process p = cli("bench data/models/conv_block.json --combos ref,onedn ref --repeat 1");
  INFO(p.out << p.err);
  CHECK(p.exit_code == 2);
  CHECK(lines(p.err) == 1);
  CHECK(p.err.find("--combos") != std::string::npos);
  CHECK(p.err.find("onedn") != std::string::npos);
  CHECK(p.out.empty());
}

TEST_CASE("an import error that names the input shapes option is spelt as --input-shape") {
  Process p = cli("info tests/inputs/good/symbolic.onnx --input-shape x=1x4x8x8");
  INFO(p.out << p.err);
  CHECK(p.exit_code == 2);
  CHECK(lines(p.err) == 1);
  CHECK(p.err.rfind("tessera: tests/inputs/good/symbolic.onnx: graph input 'x': --input-shape sets dimension 1 to 4, "
                    "the model fixes it to 3", 0) == 0);
  CHECK(p.err.find("input_shapes") == std::string::npos);   // the library's name, Python's keyword
  Process q = cli("info tests/inputs/good/symbolic.onnx --input-shape y=1x3x8x8");
  CHECK(q.exit_code == 2);
  CHECK(q.err.rfind("tessera: tests/inputs/good/symbolic.onnx: --input-shape: the model has no input named 'y'", 0) == 0);
}

TEST_CASE("a library option error is spelt as the CLI's flag") {
  Process p = cli("partition data/models/conv_block.json --backends ref,onedn --cost roofline");
  INFO(p.out << p.err);
  CHECK(p.exit_code == 2);
  CHECK(p.err.rfind("tessera: --backends: unknown backend 'onedn'", 0) == 0);
  Process s = cli("partition data/models/conv_block.json --backends ref --search fastest --cost roofline");
  CHECK(s.exit_code == 2);
  CHECK(s.err.rfind("tessera: --search: unknown search 'fastest'", 0) == 0);
}

TEST_CASE("--input-shape given twice for one input is refused, not half ignored") {
  Process p = cli("info " + kMlp + " --input-shape x=1x16 --input-shape x=2x16");
  INFO(p.err);
  CHECK(p.exit_code == 2);
  CHECK(lines(p.err) == 1);
  CHECK(p.err.find("--input-shape: x: given twice") != std::string::npos);
}

TEST_CASE("a node no backend takes names the fix when no backend takes every op") {
  Process p = cli("partition data/models/conv_block.json --backends blas --cost roofline");
  INFO(p.err);
  CHECK(p.exit_code == 2);
  CHECK(p.err.find("add ref, which takes every op") != std::string::npos);
}

TEST_CASE("--input-shape: a zero dimension is refused like a negative one") {
  for (const std::string shape : {"x=0x16", "x=1x0", "x=-1x16"}) {
    Process p = cli("info " + kMlp + " --input-shape " + shape);
    INFO(shape << " -> " << p.err);
    CHECK(p.exit_code == 2);
    CHECK(lines(p.err) == 1);
    CHECK(p.err.find("not a positive integer") != std::string::npos);
  }
}

TEST_CASE("--repeat is the one name for timed runs; tune's and calibrate's --repeats is a hidden alias") {
  for (const std::string cmd : {"run", "bench", "tune", "calibrate"}) {
    Process help = cli(cmd + " --help");
    INFO(cmd << ": " << help.out);
    CHECK(help.exit_code == 0);
    CHECK(help.out.find("--repeat ") != std::string::npos);
    CHECK(help.out.find("--repeats") == std::string::npos);
  }
  // The old spelling still parses (a usage error would exit 2 before anything runs).
  TempDir dir;
  Process old = cli("tune " + kMlp + " --backends ref --cache " + dir.file("c.db") +
                    " --budget-ms 0 --repeats 1 --no-verify --plan " + dir.file("p.json"));
  INFO(old.err);
  CHECK(old.exit_code == 0);
  Process now = cli("tune " + kMlp + " --backends ref --cache " + dir.file("c.db") +
                    " --budget-ms 0 --repeat 1 --no-verify --plan " + dir.file("q.json"));
  INFO(now.err);
  CHECK(now.exit_code == 0);
}

TEST_CASE("--cost roofline:NAME for a missing profile names each folder once and the profiles there") {
  Process p = cli("partition " + kMlp + " --backends ref --cost roofline:h100");
  INFO(p.err);
  CHECK(p.exit_code == 2);
  CHECK(lines(p.err) == 1);
  CHECK(p.err.find("h100") != std::string::npos);
  CHECK(p.err.find("a100") != std::string::npos);
  CHECK(p.err.find("xeon_8380") != std::string::npos);
  CHECK(count(p.err, "devices") == 1);
}

TEST_CASE("show MODEL --plan P titles the picture with MODEL, not the path the plan recorded") {
  TempDir dir;
  const std::string copy = dir.file("copy_of_mlp.json"), plan = dir.file("plan.json"), dot = dir.file("g.dot");
  fs::copy_file(kMlp, copy);
  cli_ok("partition " + kMlp + " --backends ref,onednn --cost roofline --plan " + plan);
  Process p = cli("show " + copy + " --plan " + plan + " --dot " + dot);
  INFO(p.err);
  REQUIRE(p.exit_code == 0);
  const std::string text = read_file(dot);
  CHECK(text.find("label=\"" + copy + "  search") != std::string::npos);
  CHECK(p.err.find("wrote " + dot) != std::string::npos);
}

TEST_CASE("counts read as English: 1 partition, 1 node, 2 partitions") {
  TempDir dir;
  const std::string plan = dir.file("plan.json");
  Process summary = cli_ok("partition " + kMlp + " --backends ref --cost roofline --search single:ref");
  INFO(summary.out);
  CHECK(summary.out.find("1 partition,") != std::string::npos);
  CHECK(summary.out.find("1 partitions") == std::string::npos);
  CHECK(summary.out.find("0 crossings") != std::string::npos);

  Process explain = cli_ok("partition " + kMlp + " --backends ref --cost roofline --search single:ref --no-coalesce --explain");
  INFO(explain.out);
  CHECK(explain.out.find("1 nodes") == std::string::npos);
  CHECK(explain.out.find(" 1 node ") != std::string::npos);

  cli_ok("partition " + kMlp + " --backends ref --cost roofline --search single:ref --plan " + plan);
  Process run = cli_ok("run " + kMlp + " --plan " + plan + " --repeat 1");
  INFO(run.out);
  CHECK(run.out.find("1 partition,") != std::string::npos);
  CHECK(run.out.find("1 partitions") == std::string::npos);
  CHECK(run.out.find("1 functions") == std::string::npos);
}

TEST_CASE("costs a person reads are milliseconds; the plan file keeps seconds and names the unit") {
  TempDir dir;
  const std::string out = dir.file("emit");
  Process explain = cli_ok("partition " + kMlp + " --backends ref,onednn --cost roofline --explain");
  INFO(explain.out);
  CHECK(explain.out.find(" ms") != std::string::npos);
  CHECK_FALSE(std::regex_search(explain.out, std::regex("cost [0-9.]+e-0[0-9]")));   // raw seconds

  Process emit = cli("partition " + kMlp + " --backends ref,onednn --cost roofline --emit " + out);
  INFO(emit.err);
  REQUIRE(emit.exit_code == 0);
  const std::string dot = read_file(fs::path(out) / "graph.dot");
  CHECK(dot.find(" ms") != std::string::npos);
  CHECK_FALSE(std::regex_search(dot, std::regex("cost [0-9.]+e-0[0-9]")));
  const nlohmann::json plan = nlohmann::json::parse(read_file(fs::path(out) / "plan.json"));
  CHECK(plan["cost_unit"] == "seconds");
  CHECK(plan["total_cost"].get<double>() < 0.01);   // seconds, not milliseconds

  Process mock = cli("partition data/models/collage_chain.json --backends tvm,byoc --cost mock:tests/search/inputs/tvm_byoc_costs.json"
                     " --plan " + dir.file("mock.json"));
  INFO(mock.err);
  REQUIRE(mock.exit_code == 0);
  CHECK(nlohmann::json::parse(read_file(dir / "mock.json"))["cost_unit"] == "model units");
}

TEST_CASE("every file written gets one 'wrote PATH' line") {
  TempDir dir;
  const std::string plan = dir.file("plan.json"), out = dir.file("emit");
  Process p = cli("partition " + kMlp + " --backends ref,onednn --cost roofline --plan " + plan + " --emit " + out);
  INFO(p.err);
  REQUIRE(p.exit_code == 0);
  CHECK(p.err.find("wrote " + plan + "\n") != std::string::npos);
  for (const std::string f : {"plan.json", "module.txt", "module.onnx", "graph.dot", "graph.svg"})
    CHECK(p.err.find("wrote " + (fs::path(out) / f).string() + "\n") != std::string::npos);

  Process run = cli("run " + kMlp + " --plan " + plan + " --repeat 1 --output-dir " + dir.file("outs"));
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(count(run.err, "wrote " + dir.file("outs") + "/") == 1);   // tiny_mlp has one output
}

TEST_CASE("missing weights: one summary line by default, every weight under --verbose") {
  // A copy of resnet18.onnx without its .weights file: every initializer is shape-only.
  TempDir dir;
  const std::string model = dir.file("resnet18.onnx"), plan = dir.file("plan.json");
  fs::copy_file("data/models/resnet18.onnx", model);
  Process part = cli("partition " + model + " --backends ref,onednn --cost roofline --plan " + plan);
  INFO(part.err);
  REQUIRE(part.exit_code == 0);
  CHECK(count(part.err, "warning") == 1);

  Process run = cli("run " + model + " --plan " + plan + " --repeat 1");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(count(run.err, "warning") <= 3);
  CHECK(std::regex_search(run.err, std::regex("[0-9]+ weights of resnet18.onnx are not on disk: running with seeded random weights")));

  Process verbose = cli("run " + model + " --plan " + plan + " --repeat 1 --verbose");
  INFO(verbose.err);
  REQUIRE(verbose.exit_code == 0);
  CHECK(count(verbose.err, "warning") > 20);
}

TEST_CASE("docs/cli.md shows run --json exactly as run prints it") {
  TempDir dir;
  const std::string plan = dir.file("plan.json");
  cli_ok("partition " + kMlp + " --backends ref --cost roofline --plan " + plan);
  Process run = cli("run " + kMlp + " --plan " + plan + " --repeat 1 --check --json");
  REQUIRE(run.exit_code == 0);
  // Numbers become N in both, so only the shape of the line is compared.
  const std::regex number("-?[0-9][0-9.e+-]*");
  std::string printed = std::regex_replace(run.out.substr(0, run.out.find('\n')), number, "N");
  const std::string docs = std::regex_replace(read_file("docs/cli.md"), number, "N");
  INFO(printed);
  CHECK(docs.find("`" + printed + "`") != std::string::npos);
}

TEST_CASE("README and docs link only to files inside the repository") {
  std::vector<fs::path> pages{"README.md"};
  for (const auto& e : fs::directory_iterator("docs"))
    if (e.path().extension() == ".md") pages.push_back(e.path());
  CHECK(fs::exists("docs/design.md"));
  const std::regex link(R"(\]\(([^)#\s]+)(#[^)]*)?\))");
  for (const fs::path& page : pages) {
    const std::string text = read_file(page);
    INFO(page.string());
    CHECK(text.find("../shared") == std::string::npos);
    CHECK(text.find("DESIGN.md") == std::string::npos);
    CHECK(text.find("CONTRACTS.md") == std::string::npos);
    for (std::sregex_iterator m(text.begin(), text.end(), link), end; m != end; ++m) {
      const std::string target = (*m)[1];
      if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) continue;
      // Only what reads as a path: "](...)" also occurs in code, e.g. Fusion[tvm](SingleOp{*}).
      if (!std::regex_match(target, std::regex("[A-Za-z0-9_./-]+")) || target.find_first_of("./") == std::string::npos)
        continue;
      INFO("link " << target);
      CHECK(fs::exists(page.parent_path() / target));
    }
  }
  CHECK(read_file("README.md").find("docs/design.md") != std::string::npos);
}

TEST_CASE("plain --cost roofline calibrates this machine once, beside the cost database, and reuses it") {
  TempDir dir;
  // The real lookup: no pinned profile, a private cache folder standing in for ~/.cache.
  const std::string env = "env -u TESSERA_ROOFLINE_PROFILE XDG_CACHE_HOME=" + dir.file("cache") + " ";
  const std::string part = env + tessera_binary() + " partition " + kMlp + " --backends ref,onednn --cost roofline --plan ";
  Process first = run_command(part + dir.file("a.json"));
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(first.err.find("calibrating") != std::string::npos);
  const fs::path devices = dir / "cache" / "tessera" / "devices";
  REQUIRE(fs::is_directory(devices));
  std::vector<fs::path> kept;
  for (const auto& e : fs::directory_iterator(devices)) kept.push_back(e.path());
  REQUIRE(kept.size() == 1);
  const nlohmann::json profile = nlohmann::json::parse(read_file(kept[0]));
  CHECK(profile["machine"].get<std::string>().size() > 3);
  CHECK(profile["machine"].get<std::string>().substr(profile["machine"].get<std::string>().size() - 3) == "/t1");
  CHECK(first.err.find("wrote " + kept[0].string()) != std::string::npos);

  Process second = run_command(part + dir.file("b.json"));
  INFO(second.err);
  REQUIRE(second.exit_code == 0);
  CHECK(second.err.find("calibrating") == std::string::npos);
  CHECK(read_file(dir / "a.json") == read_file(dir / "b.json"));

  // --cache DB: the profile lives beside that database instead.
  Process cached = run_command(part + dir.file("c.json") + " --cache " + dir.file("db/costs.db"));
  INFO(cached.err);
  REQUIRE(cached.exit_code == 0);
  CHECK(fs::is_directory(dir / "db" / "devices"));

  // A named profile from another machine: used, with exactly one warning line.
  Process named = run_command(env + tessera_binary() + " partition " + kMlp +
                              " --backends ref,onednn --cost roofline:host --plan " + dir.file("d.json"));
  INFO(named.err);
  REQUIRE(named.exit_code == 0);
  CHECK(count(named.err, "warning") == 1);
  CHECK(named.err.find("calibrating") == std::string::npos);
}

TEST_CASE("calibrate measures at one thread by default, as run and tune execute") {
  Process p = cli("calibrate --repeat 1 --gemm-size 64 --copy-mib 1");
  INFO(p.err);
  REQUIRE(p.exit_code == 0);
  CHECK(p.err.find("(1 thread") != std::string::npos);
  const nlohmann::json profile = nlohmann::json::parse(p.out);
  const std::string machine = profile["machine"];
  CHECK(machine.substr(machine.size() - 3) == "/t1");
}

TEST_CASE("every measurement shows progress, whichever command starts it") {
  TempDir dir;
  // partition with measured costs: where they go, then progress while the estimator measures.
  Process part = cli("partition " + kMlp + " --backends ref,onednn --cost measure:budget_ms=1,repeats=2 --cache " +
                     dir.file("c.db") + " --plan " + dir.file("p.json"));
  INFO(part.err);
  REQUIRE(part.exit_code == 0);
  CHECK(part.err.find("cost database " + dir.file("c.db")) != std::string::npos);
  CHECK(part.err.find("tessera: measuring: 1 function") != std::string::npos);
  CHECK(std::regex_search(part.err, std::regex("tessera: measured [0-9]+ functions")));

  // bench: one line per combination it plans, compiles and times.
  Process bench = cli("bench " + kMlp + " --combos ref ref,onednn --cost roofline --repeat 1");
  INFO(bench.err);
  REQUIRE(bench.exit_code == 0);
  CHECK(bench.err.find("bench 1/2: ref\n") != std::string::npos);
  CHECK(bench.err.find("bench 2/2: ref,onednn\n") != std::string::npos);
}
