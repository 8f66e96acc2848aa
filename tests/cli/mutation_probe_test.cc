// The mutation probe: hundreds of seeded mutations of real inputs (ONNX and JSON models, backend
// specs, mock costs, plans, .npy inputs, cost databases), plus traps (symbolic inputs bound to
// tiny, empty or absurd shapes, a plan of another model), each run through the CLI the way a user
// would. The contract (docs/design.md): exit 0, or exit 2 with exactly one printable error line on
// stderr (after any warnings, which must be printable too); never a signal, an `internal error`
// (exit 1) or an unprintable byte.
//
// Mutations are structure-aware where that finds more: in text files a number becomes one of the
// classic troublemakers (1e400, -1, 0, 2^31, 2^63-1, 2^40, nan...), a string gets a control byte,
// an invalid UTF-8 byte or a newline, a JSON member is dropped; in binary files bytes are flipped,
// deleted, duplicated or overwritten, and printable runs (names, in ONNX) get a control byte. The
// seed is fixed, so a failure reproduces; failing inputs are kept under
// build/mutation_probe_failures/ with the command that failed.
#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include "support/files.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

#include "tessera/error.h"
#include "tessera/host_tensor.h"
#include "runtime/npy.h"
#include "support/text.h"

namespace fs = std::filesystem;

namespace {

using tessera::testing::Process;
using tessera::testing::read_file;
using tessera::testing::write_file;

// Empty when the outcome keeps the contract, else what is wrong.
std::string violation(const Process& o) {
  if (o.signal) return "signal " + std::to_string(o.signal);
  if (o.exit_code != 0 && o.exit_code != 2) return "exit status " + std::to_string(o.exit_code);
  // Warnings (symbolic dimensions bound to 1, missing external weights) and the "wrote PATH" lines
  // of an earlier command in the chain may come first; the error itself is exactly one line, the last.
  size_t errors = 0;
  std::string last;
  std::istringstream in(o.err);
  for (std::string line; std::getline(in, line); last = line) {
    if (tessera::printable(line) != line) return "unprintable stderr line: " + tessera::printable(line);
    if (line.rfind("warning: ", 0) != 0 && line.rfind("tessera: warning: ", 0) != 0 && line.rfind("wrote ", 0) != 0) ++errors;
  }
  if (o.exit_code == 2 && (errors != 1 || o.err.back() != '\n' || last.rfind("tessera: ", 0) != 0 ||
                           last.rfind("tessera: warning: ", 0) == 0))
    return std::to_string(errors) + " error lines on stderr";
  return "";
}

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  size_t below(size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  // One structure-aware mutation of JSON (or any text), falling back to bytes.
  std::string text(std::string s, std::string& what) {
    static const char* kNumbers[] = {"1e400", "-1e400", "0", "-1", "2147483648", "9223372036854775807",
                                     "99999999999999999999", "1099511627776", "-0.0", "1.5", "4294967296", "nan"};
    static const char* kStrings[] = {"", "\x01", "a\nb", "\xff\xfe", "\x1b[31m", "*", "Relu(", "f32",
                                     "../../etc/passwd", "\xc3\xa9"};
    switch (below(4)) {
      case 0: {   // a number token
        std::vector<std::pair<size_t, size_t>> spans = matches(s, std::regex(R"(-?\b\d+(\.\d+)?([eE][-+]?\d+)?)"));
        if (spans.empty()) break;
        auto [at, len] = spans[below(spans.size())];
        std::string n = kNumbers[below(std::size(kNumbers))];
        what = "number '" + s.substr(at, len) + "' -> " + n;
        return s.replace(at, len, n);
      }
      case 1: {   // a string's contents
        std::vector<std::pair<size_t, size_t>> spans = matches(s, std::regex(R"("[^"\\]*")"));
        if (spans.empty()) break;
        auto [at, len] = spans[below(spans.size())];
        std::string n = kStrings[below(std::size(kStrings))];
        what = "string " + s.substr(at, len) + " -> \"" + tessera::printable(n) + "\"";
        return s.replace(at + 1, len - 2, n);
      }
      case 2: {   // drop a member or element: from a comma to the next comma
        size_t a = s.find(',', below(s.size()));
        if (a == std::string::npos) break;
        size_t b = s.find_first_of(",}]", a + 1);
        if (b == std::string::npos) break;
        what = "dropped " + tessera::printable(s.substr(a, std::min<size_t>(b - a, 40)));
        return s.erase(a, b - a);
      }
      default: break;
    }
    return bytes(std::move(s), what);
  }

  // One byte-level mutation.
  std::string bytes(std::string s, std::string& what) {
    if (s.empty()) return s;
    size_t at = below(s.size());
    switch (below(6)) {
      case 0: s[at] = static_cast<char>(s[at] ^ (1 << below(8))); what = "bit flip at " + std::to_string(at); break;
      case 1: {
        static const char kBytes[] = {0, '\x01', '\n', '\x7f', '\xff', '\x80', '\x1b', '9'};
        s[at] = kBytes[below(sizeof kBytes)];
        what = "byte " + std::to_string(at) + " overwritten";
        break;
      }
      case 2: {
        size_t n = 1 + below(std::min<size_t>(16, s.size() - at));
        s.erase(at, n);
        what = std::to_string(n) + " bytes deleted at " + std::to_string(at);
        break;
      }
      case 3: {
        size_t n = 1 + below(std::min<size_t>(64, s.size() - at));
        s.insert(at, s.substr(at, n));
        what = std::to_string(n) + " bytes duplicated at " + std::to_string(at);
        break;
      }
      case 4: s.resize(at); what = "truncated to " + std::to_string(at); break;
      default: {   // a control or invalid byte inside a printable run (a name, in ONNX)
        std::vector<std::pair<size_t, size_t>> runs = matches(s, std::regex("[A-Za-z_][A-Za-z0-9_./]{2,}"));
        if (runs.empty()) return bytes(std::move(s), what);
        auto [r, len] = runs[below(runs.size())];
        s[r + below(len)] = below(2) ? '\x07' : '\xfe';
        what = "control byte in '" + tessera::printable(s.substr(r, std::min<size_t>(len, 30))) + "'";
        break;
      }
    }
    return s;
  }

 private:
  static std::vector<std::pair<size_t, size_t>> matches(const std::string& s, const std::regex& re) {
    std::vector<std::pair<size_t, size_t>> out;
    for (auto it = std::sregex_iterator(s.begin(), s.end(), re); it != std::sregex_iterator(); ++it)
      out.emplace_back(static_cast<size_t>(it->position()), static_cast<size_t>(it->length()));
    return out;
  }

  std::mt19937_64 rng_;
};

struct Seed {
  std::string kind;        // "onnx", "json_graph", ...
  fs::path file;
  bool binary;
  std::string command;     // with FILE standing for the mutated file
};

}  // namespace

TEST_CASE("mutated inputs only ever give exit 0 or exit 2 with one printable line", "[cli][probe]") {
  const tessera::testing::TempDir temp;
  const fs::path& dir = temp.path();
  const fs::path keep = fs::path(TESSERA_BINARY_DIR) / "mutation_probe_failures";
  const std::string t = tessera::testing::tessera_binary(), d = dir.string();
  const std::string conv = "data/models/conv_block.json";

  // Real files the mutations start from: a plan and an input for conv_block, made here.
  REQUIRE(tessera::testing::run_command(t + " partition " + conv + " --backends ref,onednn --cost roofline --plan " + d +
                                        "/conv.plan.json").exit_code == 0);
  tessera::write_npy(d + "/x.npy", tessera::HostTensor::random({tessera::DType::f32, {1, 8, 16, 16}}, 7));
  const std::string partition_then_run = t + " partition FILE --backends ref,onednn --cost roofline --plan " + d +
                                         "/p.json && " + t + " run FILE --plan " + d + "/p.json --repeat 1";
  const std::vector<Seed> seeds = {
      {"onnx", "tests/fuzz/corpus/onnx/conv_relu.onnx", true, partition_then_run},
      {"onnx", "tests/fuzz/corpus/onnx/maxpool_symbolic.onnx", true, partition_then_run},
      {"onnx", "tests/fuzz/corpus/onnx/matmul_reshape.onnx", true, partition_then_run},
      {"onnx", "tests/fuzz/corpus/onnx/gap_flatten_gemm.onnx", true, partition_then_run},
      {"onnx", "data/models/bert_encoder.onnx", true, t + " partition FILE --backends ref,onednn --cost roofline"},
      {"json_graph", "data/models/conv_block.json", false, partition_then_run},
      {"json_graph", "data/models/tiny_mlp.json", false, partition_then_run},
      {"json_graph", "tests/inputs/good/resize_scales.json", false, partition_then_run},
      {"backend_spec", "data/backends/byoc.json", false,
       t + " partition " + conv + " --backends ref,byoc --backend-spec FILE --cost roofline"},
      {"backend_spec", "data/backends/onednn.json", false,
       t + " partition " + conv + " --backends onednn,ref --backend-spec FILE --cost roofline"},
      {"mock_costs", "tests/search/inputs/tvm_byoc_costs.json", false,
       t + " partition data/models/collage_diamond.json --backends tvm,byoc --cost mock:FILE"},
      {"mock_costs", "tests/fuzz/corpus/mock_costs/full.json", false,
       t + " partition " + conv + " --backends ref,onednn --cost mock:FILE"},
      {"plan", d + "/conv.plan.json", false, t + " run " + conv + " --plan FILE --repeat 1"},
      {"npy", d + "/x.npy", true, t + " run " + conv + " --plan " + d + "/conv.plan.json --input x=FILE --repeat 1"},
      {"cost_db", "tests/fuzz/corpus/cost_db/three.db", false, t + " cache stats FILE"},
  };
  // Traps: not mutations, the inputs a new user tries.
  const std::string maxpool = "tests/fuzz/corpus/onnx/maxpool_symbolic.onnx";
  std::vector<std::pair<std::string, std::string>> cases = {
      {"trap: plan of another model", t + " run data/models/tiny_mlp.json --plan " + d + "/conv.plan.json --repeat 1"},
      {"trap: 1x1 spatial input to a 3x3 pool",
       t + " partition " + maxpool + " --input-shape x=1x3x1x1 --backends ref --cost roofline --plan " + d +
           "/t.json && " + t + " run " + maxpool + " --input-shape x=1x3x1x1 --plan " + d + "/t.json --repeat 1"},
      {"trap: empty batch", t + " partition " + maxpool + " --input-shape x=0x3x8x8 --backends ref --cost roofline"},
      {"trap: 2^40-element input", t + " partition " + maxpool + " --input-shape x=1x3x1048576x1048576 --backends ref --cost roofline"},
      {"trap: symbolic left unbound", t + " partition tests/fuzz/corpus/onnx/avgpool_symbolic.onnx --backends ref --cost roofline --plan " +
                                          d + "/u.json && " + t + " run tests/fuzz/corpus/onnx/avgpool_symbolic.onnx --plan " + d + "/u.json --repeat 1"},
  };
  std::vector<std::string> files;   // mutated file of each case ("" for traps)
  files.resize(cases.size());

  Mutator mutate(20261123);
  constexpr int kPerSeed = 30;
  for (const Seed& s : seeds) {
    const std::string original = read_file(s.file);
    REQUIRE(!original.empty());
    for (int k = 0; k < kPerSeed; ++k) {
      std::string what;
      std::string bytes = s.binary ? mutate.bytes(original, what) : mutate.text(original, what);
      if (k % 5 == 4) bytes = mutate.text(bytes, what);   // some get two mutations
      const fs::path file = dir / (s.kind + "_" + std::to_string(cases.size()) + s.file.extension().string());
      write_file(file, bytes);
      cases.emplace_back(s.kind + " " + s.file.filename().string() + ": " + what,
                         std::regex_replace(s.command, std::regex("FILE"), file.string()));
      files.push_back(file.string());
    }
  }

  // Two cases at a time (each a short CLI process): every case gets its own plan file, so they
  // never share one.
  const std::string shared_plan = d + "/p.json";
  for (size_t i = 0; i < cases.size(); ++i)
    for (size_t at; (at = cases[i].second.find(shared_plan)) != std::string::npos;)
      cases[i].second.replace(at, shared_plan.size(), d + "/p" + std::to_string(i) + ".json");
  std::vector<Process> outcomes(cases.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < cases.size();) outcomes[i] = tessera::testing::run_command(cases[i].second);
  };
  std::thread other(worker);
  worker();
  other.join();

  std::vector<std::string> failures;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Process& o = outcomes[i];
    std::string v = violation(o);
    if (v.empty()) continue;
    failures.push_back(cases[i].first + ": " + v + ": " + tessera::printable(o.err.substr(0, 300)));
    fs::create_directories(keep);
    if (!files[i].empty()) fs::copy_file(files[i], keep / fs::path(files[i]).filename(), fs::copy_options::overwrite_existing);
    std::ofstream(keep / "commands.txt", std::ios::app) << cases[i].second << "\n";
  }
  INFO(cases.size() << " cases; failures:\n" << [&] {
    std::string all;
    for (const auto& f : failures) all += f + "\n";
    return all;
  }());
  CHECK(cases.size() >= 400);
  CHECK(failures.empty());
}
