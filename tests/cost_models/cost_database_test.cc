// The cost database: round trip, torn and corrupt lines, concurrent writers, a killed writer, merge.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "support/files.h"
#include "support/temp_dir.h"
#include "tessera/cost_database.h"

using namespace tessera;
using tessera::testing::read_file;
using tessera::testing::TempDir;
namespace fs = std::filesystem;

namespace {
CostKey key(int i, const std::string& backend = "onednn@2.6") {
  char h[17];
  std::snprintf(h, sizeof h, "%016x", i);
  return CostKey{h, backend, "host/0123456789abcdef", "roofline/1"};
}

void append_text(const fs::path& p, const std::string& s) {
  std::ofstream out(p, std::ios::binary | std::ios::app);
  out << s;
}

// Writes n records with keys [first, first + n) from this process.
void write_records(const fs::path& p, int first, int n) {
  auto db = CostDatabase::open(p);
  for (int i = first; i < first + n; ++i) db->insert(key(i), CostEntry{Cost::value(i * 1e-6), 1e-8, 7});
}
}  // namespace

TEST_CASE("cost database: records round trip through the log, last record wins") {
  TempDir dir;
  fs::path p = dir.path() / "sub" / "costs.db";
  {
    auto db = CostDatabase::open(p);
    db->insert(key(1), CostEntry{Cost::value(1.5e-5), 2e-7, 9});
    db->insert(key(2), CostEntry{Cost::invalid("oneDNN: unsupported\tlayout\n(x)"), 0, 0});
    db->insert(key(3), CostEntry{Cost::value(3.0), 0, 0});
    db->insert(key(3), CostEntry{Cost::value(4.0), 0, 0});
    db->insert(key(3), CostEntry{Cost::value(4.0), 0, 0});   // unchanged: not appended again
    REQUIRE(db->stats().appended == 4);
  }
  auto db = CostDatabase::open(p);
  REQUIRE(db->stats().records == 4);
  REQUIRE(db->stats().corrupt == 0);
  REQUIRE(db->stats().entries == 3);
  REQUIRE(db->lookup(key(1)) == CostEntry{Cost::value(1.5e-5), 2e-7, 9});
  REQUIRE(db->lookup(key(2))->cost == Cost::invalid("oneDNN: unsupported\tlayout\n(x)"));
  REQUIRE(db->lookup(key(3))->cost == Cost::value(4.0));
  REQUIRE_FALSE(db->lookup(key(4)).has_value());
  REQUIRE_FALSE(db->lookup(key(1, "blas")).has_value());
  // One line per record, each self-checking.
  std::string text = read_file(p);
  REQUIRE(std::count(text.begin(), text.end(), '\n') == 4);
  REQUIRE(CostDatabase::decode_record(CostDatabase::encode_record(key(5), CostEntry{Cost::unknown(), 0, 0})));
  // An infinite cost (no measurement gives one; a hand-made "plan" record could) is not trusted.
  const Cost inf = Cost::value(std::numeric_limits<double>::infinity());
  REQUIRE_FALSE(CostDatabase::decode_record(CostDatabase::encode_record(key(6), CostEntry{inf, 0, 1})));
}

TEST_CASE("cost database: a torn last line and a corrupt line are skipped, appends start a fresh line") {
  TempDir dir;
  fs::path p = dir.path() / "costs.db";
  write_records(p, 0, 3);
  std::string line = CostDatabase::encode_record(key(99), CostEntry{Cost::value(9.0), 0, 0});
  append_text(p, line.substr(0, line.size() / 2));   // a writer killed mid-record
  {
    auto db = CostDatabase::open(p);
    REQUIRE(db->stats().records == 3);
    REQUIRE(db->stats().corrupt == 1);
    REQUIRE_FALSE(db->lookup(key(99)).has_value());
    db->insert(key(4), CostEntry{Cost::value(4.0), 0, 0});
  }
  // Flip one digit inside a record: its CRC no longer matches.
  std::string text = read_file(p);
  size_t at = text.find("\"c\":\"1e-06\"");
  REQUIRE(at != std::string::npos);
  text[at + 5] = '2';
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
  auto db = CostDatabase::open(p);
  REQUIRE(db->stats().records == 3);   // keys 0, 2, 4 (key 1 corrupt)
  REQUIRE(db->stats().corrupt == 2);
  REQUIRE(db->lookup(key(4))->cost == Cost::value(4.0));
  REQUIRE_FALSE(db->lookup(key(1)).has_value());
}

TEST_CASE("cost database: two processes writing at once lose nothing") {
  TempDir dir;
  fs::path p = dir.path() / "costs.db";
  constexpr int kEach = 400;
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    write_records(p, 0, kEach);
    ::_exit(0);
  }
  write_records(p, kEach, kEach);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  auto db = CostDatabase::open(p);
  REQUIRE(db->stats().corrupt == 0);
  REQUIRE(db->stats().entries == 2 * kEach);
  for (int i = 0; i < 2 * kEach; ++i) REQUIRE(db->lookup(key(i))->cost == Cost::value(i * 1e-6));
}

TEST_CASE("cost database: a reader after a killed writer sees every finished record") {
  TempDir dir;
  fs::path p = dir.path() / "costs.db";
  int pipefd[2];
  REQUIRE(::pipe(pipefd) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(pipefd[0]);
    auto db = CostDatabase::open(p);
    for (int i = 0;; ++i) {
      db->insert(key(i), CostEntry{Cost::value(i * 1e-6), 0, 0});
      if (i == 200) (void)!::write(pipefd[1], "x", 1);   // tell the parent: at least 201 are on disk
    }
  }
  ::close(pipefd[1]);
  char c;
  REQUIRE(::read(pipefd[0], &c, 1) == 1);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(pipefd[0]);
  auto db = CostDatabase::open(p);
  CostDatabaseStats s = db->stats();
  REQUIRE(s.corrupt <= 1);
  REQUIRE(s.entries >= 201);
  for (int i = 0; i < static_cast<int>(s.entries); ++i) REQUIRE(db->lookup(key(i)).has_value());
}

TEST_CASE("cost database: merge keeps every key, B wins, output is compact and sorted") {
  TempDir dir;
  fs::path a = dir.path() / "a.db", b = dir.path() / "b.db", c = dir.path() / "c.db";
  write_records(a, 0, 10);
  write_records(b, 5, 10);
  {
    auto db = CostDatabase::open(b);
    db->insert(key(0), CostEntry{Cost::invalid("from b"), 0, 0});
  }
  REQUIRE(merge_cost_databases(a, b, c) == 15);
  auto merged = CostDatabase::open(c);
  REQUIRE(merged->stats().records == 15);
  REQUIRE(merged->lookup(key(0))->cost == Cost::invalid("from b"));
  REQUIRE(merged->lookup(key(14))->cost == Cost::value(14e-6));
  // Idempotent, and the output may be an input.
  std::string once = read_file(c);
  REQUIRE(merge_cost_databases(c, c, c) == 15);
  REQUIRE(read_file(c) == once);
  REQUIRE(merge_cost_databases(c, a, a) == 15);
  REQUIRE(CostDatabase::open(a)->lookup(key(0))->cost == Cost::value(0.0));
  REQUIRE_THROWS(merge_cost_databases(dir.path() / "missing.db", a, c));
}

TEST_CASE("cost database: a database written before zlib's CRC-32 reads entry for entry") {
  // inputs/costs_v1.db was written by the table-driven CRC-32 this project had before zlib's
  // (commit "a cost database written by the table CRC-32 code"): mock, roofline and measured
  // records, an Invalid reason with quotes, tab, newline and non-ASCII text. costs_v1.entries
  // lists what that code read back. Opened from a copy: the source tree may be read-only.
  const fs::path src = fs::path(TESSERA_SOURCE_DIR) / "tests/cost_models/inputs";
  TempDir dir;
  fs::copy_file(src / "costs_v1.db", dir.path() / "costs.db");
  fs::permissions(dir.path() / "costs.db", fs::perms::owner_read | fs::perms::owner_write);   // the source may be 0444
  auto db = CostDatabase::open(dir.path() / "costs.db");
  CHECK(db->stats().corrupt == 0);
  CHECK(db->stats().records == 90);
  std::string listing;
  for (const auto& [k, e] : db->entries())
    listing += nlohmann::json::array({k.hash, k.backend, k.device, k.model, e.cost.to_string(), e.spread, e.samples}).dump() + "\n";
  CHECK(listing == read_file(src / "costs_v1.entries"));
  // Every record re-encodes to the same bytes: same JSON, same CRC.
  for (const std::string& line : tessera::testing::read_lines(src / "costs_v1.db")) {
    auto rec = CostDatabase::decode_record(line);
    REQUIRE(rec);
    CHECK(CostDatabase::encode_record(rec->first, rec->second) == line);
  }
}
