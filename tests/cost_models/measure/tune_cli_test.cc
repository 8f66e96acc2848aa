// tessera tune as a process: the cost database survives kill -9 and Ctrl-C, and a rerun measures
// only what the first run did not finish. Runs build/tessera (TESSERA_BINARY_DIR) on tiny_mlp with
// ref and eigen: 14 distinct functions, each measured for a 100 ms budget, so a run lasts ~1.5 s
// and the test can interrupt it in the middle.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tessera/cost_database.h"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

const std::string kTessera = std::string(TESSERA_BINARY_DIR) + "/tessera";

struct Run {
  pid_t pid = -1;
  fs::path err;
};

// Starts `tessera tune` on tiny_mlp with the given database and budget; stderr goes to a file.
Run start_tune(const fs::path& db, const std::string& budget_ms, const std::string& tag) {
  Run r;
  r.err = fs::temp_directory_path() / ("tessera_tune_" + tag + "_" + std::to_string(::getpid()) + ".err");
  std::vector<std::string> args{kTessera, "tune", "data/models/tiny_mlp.json", "--backends", "ref,eigen",
                                "--cache", db.string(), "--budget-ms", budget_ms, "--repeats", "1000000"};
  r.pid = ::fork();
  if (r.pid == 0) {
    int fd = ::open(r.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int null = ::open("/dev/null", O_WRONLY);
    ::dup2(fd, 2);
    ::dup2(null, 1);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(kTessera.c_str(), argv.data());
    ::_exit(127);
  }
  return r;
}

int wait_status(pid_t pid) {
  int st = 0;
  ::waitpid(pid, &st, 0);
  return st;
}

std::vector<std::string> lines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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

fs::path temp_db(const std::string& tag) {
  fs::path p = fs::temp_directory_path() / ("tessera_tune_" + tag + "_" + std::to_string(::getpid()) + ".db");
  fs::remove(p);
  return p;
}

}  // namespace

TEST_CASE("the cost database survives a killed tune; the rerun reuses every finished measurement") {
  REQUIRE(fs::exists(kTessera));
  fs::path db = temp_db("kill");
  Run first = start_tune(db, "100", "kill1");
  size_t seen = wait_records(db, 3);
  ::kill(first.pid, SIGKILL);
  int st = wait_status(first.pid);
  REQUIRE(WIFSIGNALED(st));
  std::vector<std::string> before = lines(db);
  REQUIRE(before.size() >= seen);
  REQUIRE(before.size() < 14);   // killed mid-run, not after
  CHECK(tessera::CostDatabase::open(db)->stats().corrupt == 0);

  // The rerun's budget differs, which does not change the key: what is there is reused.
  Run second = start_tune(db, "1", "kill2");
  st = wait_status(second.pid);
  INFO(slurp(second.err));
  REQUIRE(WIFEXITED(st));
  REQUIRE(WEXITSTATUS(st) == 0);
  CHECK(slurp(second.err).find("14 candidates, " + std::to_string(14 - before.size()) + " to measure") !=
        std::string::npos);
  // 14 candidates, plus the coalesced wholes and end-to-end plan latencies the plan phase records.
  std::vector<std::string> after = lines(db);
  CHECK(after.size() >= 14);
  CHECK(std::equal(before.begin(), before.end(), after.begin()));   // first run's records untouched
  CHECK(unique_keys(db).size() == after.size());                     // nothing measured twice

  // A third run measures nothing.
  Run third = start_tune(db, "1", "kill3");
  CHECK(WEXITSTATUS(wait_status(third.pid)) == 0);
  CHECK(slurp(third.err).find("14 candidates, 0 to measure") != std::string::npos);
  CHECK(lines(db).size() == after.size());
  for (const fs::path& p : {db, first.err, second.err, third.err}) fs::remove(p);
}

TEST_CASE("Ctrl-C stops tune with status 130, keeping what it measured") {
  REQUIRE(fs::exists(kTessera));
  fs::path db = temp_db("int");
  Run run = start_tune(db, "100", "int");
  wait_records(db, 2);
  auto t0 = std::chrono::steady_clock::now();
  ::kill(run.pid, SIGINT);
  int st = wait_status(run.pid);
  CHECK(std::chrono::steady_clock::now() - t0 < 2s);
  INFO(slurp(run.err));
  REQUIRE(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 130);
  CHECK(slurp(run.err).find("interrupted: ") != std::string::npos);
  size_t kept = lines(db).size();
  CHECK(kept >= 2);
  CHECK(kept < 14);
  CHECK(unique_keys(db).size() == kept);
  fs::remove(db);
  fs::remove(run.err);
}
