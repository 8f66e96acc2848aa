// The CLI contract of `tessera run --json` and `tessera bench --json` (CONTRACTS.md): exact keys,
// types, exit status.
#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace {

struct Result {
  int status;
  std::string out;
};

Result sh(const std::string& cmd) {
  std::array<char, 4096> buf;
  std::string out;
  FILE* p = popen((cmd + " 2>/dev/null").c_str(), "r");
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  int rc = pclose(p);
  return {WEXITSTATUS(rc), out};
}

const std::string kTessera = std::string(TESSERA_BINARY_DIR) + "/tessera";

std::string tmp(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / "tessera_runtime_cli_test";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

}  // namespace

TEST_CASE("tessera run --json prints exactly latency_ms, max_abs_error, ok") {
  const std::string plan = tmp("mlp_plan.json");
  REQUIRE(sh(kTessera + " partition data/models/tiny_mlp.json --backends ref,onednn --cost roofline --plan " + plan).status == 0);
  Result r = sh(kTessera + " run data/models/tiny_mlp.json --plan " + plan + " --check --repeat 3 --json");
  REQUIRE(r.status == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j.size() == 3);
  CHECK(j["latency_ms"].is_number());
  CHECK(j["latency_ms"].get<double>() > 0);
  CHECK(j["max_abs_error"].is_number());
  CHECK(j["ok"] == true);

  Result nocheck = sh(kTessera + " run data/models/tiny_mlp.json --plan " + plan + " --repeat 1 --json");
  REQUIRE(nocheck.status == 0);
  CHECK(nlohmann::json::parse(nocheck.out)["max_abs_error"].is_null());
}

TEST_CASE("tessera run: --input reads .npy; a wrong shape is a usage error") {
  const std::string plan = tmp("mlp_plan2.json");
  REQUIRE(sh(kTessera + " partition data/models/tiny_mlp.json --backends ref --cost roofline --plan " + plan).status == 0);
  // x: f32 1x16, hand-written .npy v1.0
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 16), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string npy = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header + std::string(64, '\0');
  const std::string good = tmp("x.npy");
  { FILE* f = fopen(good.c_str(), "wb"); fwrite(npy.data(), 1, npy.size(), f); fclose(f); }
  Result ok = sh(kTessera + " run data/models/tiny_mlp.json --plan " + plan + " --input x=" + good + " --check --repeat 1 --json");
  CHECK(ok.status == 0);
  Result bad = sh(kTessera + " run data/models/tiny_mlp.json --plan " + plan + " --input nope=" + good + " --repeat 1");
  CHECK(bad.status == 2);
}

TEST_CASE("tessera bench --json lists backends, predicted_ms, measured_ms per combination") {
  const std::string svg = tmp("bench.svg");
  Result r = sh(kTessera + " bench data/models/conv_block.json --combos ref ref,onednn --repeat 2 --json --svg " + svg);
  REQUIRE(r.status == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  REQUIRE(j.size() == 2);
  CHECK(j[1]["backends"] == nlohmann::json({"ref", "onednn"}));
  CHECK(j[1]["predicted_ms"].is_number());
  CHECK(j[1]["measured_ms"].is_number());
  CHECK(std::filesystem::file_size(svg) > 200);
}
