// tessera tune as a process: the cost database survives kill -9 and Ctrl-C, and a rerun measures
// only what the first run did not finish. Runs build/tessera (TESSERA_BINARY_DIR) on tiny_mlp with
// ref and eigen: 14 distinct functions, each measured for a 100 ms budget, so a run lasts ~1.5 s
// and the test can interrupt it in the middle.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/files.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"
#include "tessera/cost_database.h"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using tessera::testing::Child;
using tessera::testing::ProcessStatus;
using tessera::testing::read_file;
using tessera::testing::TempDir;

namespace {

struct Run {
  Child child;
  fs::path err;
};

// Starts `tessera tune` on tiny_mlp with the given database and budget; stderr goes to a file.
Run start_tune(const TempDir& dir, const fs::path& db, const std::string& budget_ms, const std::string& tag) {
  Run r;
  r.err = dir / (tag + ".err");
  r.child = tessera::testing::start_process({tessera::testing::tessera_binary(), "tune", "data/models/tiny_mlp.json",
                                             "--backends", "ref,eigen", "--cache", db.string(), "--budget-ms", budget_ms,
                                             "--repeats", "1000000"},
                                            r.err.string());
  return r;
}

std::vector<std::string> lines(const fs::path& p) { return tessera::testing::read_lines(p); }

// Waits until the database has at least `n` records (or `limit` passes).
size_t wait_records(const fs::path& db, size_t n, std::chrono::seconds limit = 20s) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (fs::exists(db) && lines(db).size() >= n) break;
    std::this_thread::sleep_for(5ms);
  }
  return fs::exists(db) ? lines(db).size() : 0;
}

// Every record's key, checking that none appears twice (a rerun measured nothing twice).
std::set<tessera::CostKey> unique_keys(const fs::path& db) {
  std::set<tessera::CostKey> keys;
  for (const std::string& l : lines(db)) {
    auto rec = tessera::CostDatabase::decode_record(l);
    REQUIRE(rec);
    CHECK(keys.insert(rec->first).second);
  }
  return keys;
}

}  // namespace

TEST_CASE("the cost database survives a killed tune; the rerun reuses every finished measurement") {
  TempDir dir;
  const fs::path db = dir / "costs.db";
  Run first = start_tune(dir, db, "100", "kill1");
  size_t seen = wait_records(db, 3);
  ::kill(first.child.pid, SIGKILL);
  ProcessStatus st = first.child.wait();
  REQUIRE(st.signal == SIGKILL);
  std::vector<std::string> before = lines(db);
  REQUIRE(before.size() >= seen);
  REQUIRE(before.size() < 14);   // killed mid-run, not after
  CHECK(tessera::CostDatabase::open(db)->stats().corrupt == 0);

  // The rerun's budget differs, which does not change the key: what is there is reused.
  Run second = start_tune(dir, db, "1", "kill2");
  st = second.child.wait();
  INFO(read_file(second.err));
  REQUIRE(st.exit_code == 0);
  CHECK(read_file(second.err).find("14 candidates, " + std::to_string(14 - before.size()) + " to measure") !=
        std::string::npos);
  // 14 candidates, plus the coalesced wholes and end-to-end plan latencies the plan phase records.
  std::vector<std::string> after = lines(db);
  CHECK(after.size() >= 14);
  CHECK(std::equal(before.begin(), before.end(), after.begin()));   // first run's records untouched
  CHECK(unique_keys(db).size() == after.size());                     // nothing measured twice

  // A third run measures nothing.
  Run third = start_tune(dir, db, "1", "kill3");
  CHECK(third.child.wait().exit_code == 0);
  CHECK(read_file(third.err).find("14 candidates, 0 to measure") != std::string::npos);
  CHECK(lines(db).size() == after.size());
}

TEST_CASE("Ctrl-C stops tune with status 130, keeping what it measured") {
  TempDir dir;
  const fs::path db = dir / "costs.db";
  Run run = start_tune(dir, db, "100", "int");
  wait_records(db, 2);
  ::kill(run.child.pid, SIGINT);
  ProcessStatus st = run.child.wait();
  INFO(read_file(run.err));
  REQUIRE(st.exit_code == 130);
  CHECK(read_file(run.err).find("interrupted: ") != std::string::npos);
  // Stopped, not finished: fewer than the 14 functions were measured, none of them twice.
  size_t kept = lines(db).size();
  CHECK(kept >= 2);
  CHECK(kept < 14);
  CHECK(unique_keys(db).size() == kept);
}
