// tessera tune --mpi under mpirun on localhost (TESSERA_MPIEXEC, --oversubscribe): dealing, several
// models per run, a rank that dies (with and without mpirun --enable-recovery), and the refusal to
// mix machines. Each case is its own ctest test (see CMakeLists.txt) and lasts a few seconds.
// Slow measurements come from the test-only test_sleep backend (TESSERA_TEST_SLEEP_MS); real ones
// from ref and eigen.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/files.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"
#include "tessera/cost_database.h"

namespace fs = std::filesystem;
using nlohmann::json;
using tessera::testing::read_file;
using tessera::testing::TempDir;

namespace {

const std::string kTessera = tessera::testing::tessera_binary();
const std::string kMpirun = std::string(TESSERA_MPIEXEC) + " --allow-run-as-root --oversubscribe";
const std::string kSleepSpec = "--backend-spec tests/inputs/distributed/test_sleep.json --backends test_sleep";

// Runs a shell command line with stdout and stderr to files; returns the exit status.
int sh(const std::string& command, const TempDir& dir, const std::string& tag) {
  std::string line = command + " > " + dir.file(tag + ".out") + " 2> " + dir.file(tag + ".err");
  const tessera::testing::Process p = tessera::testing::run_command(line);
  return p.exited() ? p.exit_code : 128 + p.signal;
}

json report(const std::string& path) {
  REQUIRE(fs::exists(path));
  return json::parse(read_file(path));
}

// The database's records, checking that each is valid and no key appears twice.
std::vector<tessera::CostKey> records(const std::string& db) {
  std::vector<tessera::CostKey> keys;
  std::set<tessera::CostKey> seen;
  std::ifstream in(db);
  for (std::string l; std::getline(in, l);) {
    auto rec = tessera::CostDatabase::decode_record(l);
    REQUIRE(rec);
    CHECK(seen.insert(rec->first).second);
    keys.push_back(rec->first);
  }
  return keys;
}

size_t total(const json& r) {
  size_t n = 0;
  for (const json& x : r["measured_per_rank"]) n += x.get<size_t>();
  return n;
}

}  // namespace

// Every tune here runs with --no-coalesce --no-verify: the dealing of candidate measurements is
// what is counted; measured wholes and end-to-end checks (rank 0 only) would add records beside them.
TEST_CASE("mpirun -n 3 deals every job once; partition from the database gives the same plan", "[dealing]") {
  TempDir d;
  const std::string tune = kMpirun + " -n 3 " + kTessera + " tune --no-coalesce --no-verify data/models/tiny_mlp.json --backends ref,eigen --budget-ms 2" +
                           " --cache " + d.file("c.db") + " --plan " + d.file("tune.json") + " --report " + d.file("r.json") + " --mpi";
  REQUIRE(sh(tune, d, "tune") == 0);
  json r = report(d.file("r.json"));
  INFO(r.dump());
  CHECK(r["ranks"] == 3);
  CHECK(r["measured_per_rank"].size() == 3);
  CHECK(r["from_database"] == 0);
  CHECK(r["distinct"] == 14);
  CHECK(total(r) == 14);
  CHECK(records(d.file("c.db")).size() == 14);
  CHECK(r["hosts"].size() == 3);
  CHECK(r["wall_s"].get<double>() > 0);
  int busy = 0;
  for (const json& n : r["measured_per_rank"]) busy += n.get<int>() > 0;
  CHECK(busy >= 2);   // dealt across ranks, not all measured by one

  // The same plan from the database, byte for byte, measuring nothing (the same pipeline, tune.h).
  const std::string part = kTessera + " partition --no-coalesce --no-verify data/models/tiny_mlp.json --backends ref,eigen --cost measure --cache " +
                           d.file("c.db") + " --plan " + d.file("part.json");
  REQUIRE(sh(part, d, "part") == 0);
  CHECK(read_file(d.file("part.json")) == read_file(d.file("tune.json")));
  CHECK(records(d.file("c.db")).size() == 14);

  // A rerun measures nothing and says where everything came from.
  REQUIRE(sh(tune, d, "again") == 0);
  json again = report(d.file("r.json"));
  CHECK(again["from_database"] == 14);
  CHECK(total(again) == 0);
  CHECK(read_file(d.file("tune.json")) == read_file(d.file("part.json")));
}

TEST_CASE("several models in one run share one database; every rank measures", "[models]") {
  TempDir d;
  const std::string both = "data/models/collage_chain.json data/models/collage_diamond.json";
  REQUIRE(sh("TESSERA_TEST_SLEEP_MS=60 " + kMpirun + " -n 3 " + kTessera + " tune --no-coalesce --no-verify " + both + " " + kSleepSpec +
                 ",ref --budget-ms 1 --cache " + d.file("c.db") + " --plan-dir " + d.file("plans --report ") + d.file("r.json --mpi"),
             d, "tune") == 0);
  json r = report(d.file("r.json"));
  INFO(r.dump());
  for (const json& n : r["measured_per_rank"]) CHECK(n.get<int>() > 0);
  size_t own = 0;
  for (const json& m : r["models"]) own += m["distinct"].get<size_t>();
  CHECK(own > r["distinct"].get<size_t>());   // shared functions counted once...
  CHECK(total(r) == r["distinct"].get<size_t>());
  CHECK(records(d.file("c.db")).size() == r["distinct"].get<size_t>());   // ...and measured once
  CHECK(json::parse(read_file(d.file("plans/collage_chain.json")))["format"] == "tessera.plan");
  CHECK(json::parse(read_file(d.file("plans/collage_diamond.json")))["format"] == "tessera.plan");

  // Without --mpi, --report still works; one model of the pair finds everything in the database.
  REQUIRE(sh("TESSERA_TEST_SLEEP_MS=60 " + kTessera + " tune --no-coalesce --no-verify data/models/collage_diamond.json " + kSleepSpec +
                 ",ref --cache " + d.file("c.db") + " --report " + d.file("one.json"),
             d, "one") == 0);
  json one = report(d.file("one.json"));
  CHECK(one["ranks"] == 1);
  CHECK(one["measured_per_rank"] == json::array({0}));
  CHECK(one["from_database"] == r["models"][1]["distinct"]);

  // --plan names one file: with two models it is a usage error.
  CHECK(sh(kTessera + " tune --no-coalesce --no-verify " + both + " --backends ref --cache " + d.file("c.db") + " --plan " + d.file("p.json"), d, "bad") == 2);
  CHECK(read_file(d.file("bad.err")).find("use --plan-dir DIR") != std::string::npos);
}

TEST_CASE("a rank that dies aborts the job without losing what finished; the rerun measures the rest", "[dies]") {
  TempDir d;
  const std::string tune = kTessera + " tune --no-coalesce --no-verify data/models/resnet18.onnx " + kSleepSpec + " --cache " + d.file("c.db") +
                           " --report " + d.file("r.json --mpi");
  int st = sh("TESSERA_TEST_SLEEP_MS=100 TESSERA_TEST_MPI_DIE=2:3 " + kMpirun + " -n 3 " + tune, d, "killed");
  CHECK(st != 0);   // OpenMPI's default: one dead rank ends the job
  size_t kept = records(d.file("c.db")).size();
  CHECK(kept > 0);
  CHECK(kept < 24);
  CHECK(tessera::CostDatabase::open(d.file("c.db"))->stats().corrupt == 0);

  REQUIRE(sh("TESSERA_TEST_SLEEP_MS=100 " + kMpirun + " -n 2 " + tune, d, "rerun") == 0);
  json r = report(d.file("r.json"));
  INFO(r.dump());
  CHECK(r["from_database"] == kept);
  CHECK(total(r) == 24 - kept);
  CHECK(records(d.file("c.db")).size() == 24);
}

TEST_CASE("under mpirun --enable-recovery a dead rank's job is dealt again and the run finishes", "[recovery]") {
  TempDir d;
  REQUIRE(sh("TESSERA_TEST_SLEEP_MS=100 TESSERA_TEST_MPI_DIE=2:2 " + kMpirun + " --enable-recovery -n 3 " + kTessera +
                 " tune --no-coalesce --no-verify data/models/resnet18.onnx " + kSleepSpec + " --timeout 1 --cache " + d.file("c.db") + " --plan " +
                 d.file("p.json --report ") + d.file("r.json --mpi"),
             d, "tune") == 0);
  json r = report(d.file("r.json"));
  INFO(r.dump() << "\n" << read_file(d.file("tune.err")));
  CHECK(r["dead_ranks"] == json::array({2}));
  CHECK(r["redealt"].get<int>() >= 1);
  CHECK(r["measured_per_rank"][2] == 1);   // its first job; the second died with it
  CHECK(total(r) == 24);
  CHECK(records(d.file("c.db")).size() == 24);
  CHECK(fs::exists(d.file("p.json")));
  CHECK(read_file(d.file("tune.err")).find("rank 2 did not answer within 3 s: presumed dead") != std::string::npos);
}

TEST_CASE("rank 0 refuses to mix measurements of different machines and names the hosts", "[machines]") {
  TempDir d;
  const std::string tune = kTessera + " tune --no-coalesce --no-verify data/models/resnet18.onnx " + kSleepSpec + " --cache " + d.file("c.db") + " --mpi";
  int st = sh("TESSERA_TEST_SLEEP_MS=100 " + kMpirun + " -n 2 " + tune + " : -n 1 -x TESSERA_MACHINE_FINGERPRINT=other-machine " +
                  tune,
              d, "mixed");
  std::string err = read_file(d.file("mixed.err"));
  INFO(err);
  CHECK(st == 2);
  CHECK(err.find("tessera: --mpi: ranks on different machines") != std::string::npos);
  CHECK(err.find("rank 2 on host ") != std::string::npos);
  CHECK(err.find("is machine 'other-machine', rank 0 on host ") != std::string::npos);
  for (const tessera::CostKey& k : records(d.file("c.db"))) CHECK(k.device.find("other-machine") == std::string::npos);
}
