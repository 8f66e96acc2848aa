// CostDatabase: every cost tessera has estimated or measured, kept across runs.
//
// Terms. A CostKey is (structural hash of the candidate function as 16 hex digits, backend name and
// version, device fingerprint, cost model fingerprint). A CostEntry is the Cost (state, value,
// reason) plus, for measurements, the spread (e.g. interquartile range, seconds) and sample count.
//
// On disk: an append-only log, one record per line:
//   {"b":"onednn@2.6","c":"1.25e-05","d":"host/5c1d..","h":"9f3a..","m":"measure/1","s":0.0,...}\t1a2b3c4d
// i.e. compact JSON, a tab, and the CRC-32 (IEEE, zlib's crc32) of the JSON text in 8 hex digits.
// tests/cost_models/inputs/costs_v1.db, written by an earlier build, must keep reading entry for entry.
// A measured precision variant adds "e" (its relative error, CostEntry::error); readers ignore its absence.
//   - Crash-safe: a record is appended with a single write(2) on an O_APPEND descriptor, so a kill
//     loses at most the record being written; a torn or corrupt line fails its CRC and is skipped
//     on load (and counted), never trusted.
//   - Several processes: each append holds flock(LOCK_EX) around its one write, so records from
//     concurrent writers never interleave, even on filesystems where O_APPEND alone is not atomic
//     for large writes. Readers take no lock: they see a prefix of complete records plus, at
//     worst, one torn tail that fails its CRC.
//   - Load replays the log into an in-memory map; the last record for a key wins.
//   - A record written after a torn tail starts a fresh line (the writer checks that the file ends
//     in '\n' under the lock), so one bad record never swallows the next.
//
// Not needed for correctness: compaction. The log only grows; `tessera cache merge A B -o C`
// writes one record per key and is the compaction. Scale: ~100 bytes per record; a tuning run of
// a few thousand candidates is well under a megabyte.
//
// Thread-safe: lookup/insert may be called from many threads (one mutex; lookups are cheap next to
// any estimate worth caching).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tessera/cost.h"

namespace tessera {

struct CostKey {
  std::string hash;      // hash_hex(structural_hash(fn))
  std::string backend;   // "name" or "name@version"
  std::string device;    // CostModel::device_fingerprint
  std::string model;     // CostModel::fingerprint

  auto operator<=>(const CostKey&) const = default;
  std::string to_string() const;   // "hash backend device model", for messages
};

struct CostEntry {
  Cost cost;
  double spread = 0.0;   // measurements: spread of the samples (seconds); 0 for estimates
  int64_t samples = 0;   // measurements: how many runs; 0 for estimates
  // Measurements of a precision variant (BackendCompiler::precision() != "f32"): the relative L2
  // error of its outputs against ref's fp32 on the same inputs, max over outputs. Unset for fp32
  // backends and estimates. On disk the optional field "e"; records without it (every record
  // written before it existed) read back unset.
  std::optional<double> error;
  bool operator==(const CostEntry&) const = default;
};

struct CostDatabaseStats {
  size_t records = 0;    // valid records read on load
  size_t corrupt = 0;    // lines skipped on load (torn or failing their CRC)
  size_t entries = 0;    // distinct keys now
  size_t appended = 0;   // records this object has appended since open
};

class CostDatabase {
 public:
  // In memory only: nothing is read or written.
  CostDatabase() = default;
  // Opens (creating directories and the file if needed) and loads `path`; later inserts append.
  // Throws UserError("PATH: cannot open cost database: REASON") if it cannot be opened.
  static std::unique_ptr<CostDatabase> open(const std::filesystem::path& path);
  ~CostDatabase();
  CostDatabase(const CostDatabase&) = delete;
  CostDatabase& operator=(const CostDatabase&) = delete;

  std::optional<CostEntry> lookup(const CostKey& key) const;
  // Records the entry in memory and, when persistent, appends it to the log.
  void insert(const CostKey& key, const CostEntry& entry);

  CostDatabaseStats stats() const;
  // Every entry, sorted by key.
  std::vector<std::pair<CostKey, CostEntry>> entries() const;
  const std::filesystem::path& path() const { return path_; }

  // One log line (without '\n') for a record, and its inverse (nullopt: torn, corrupt, or not a
  // record). Exposed for tests and tools.
  static std::string encode_record(const CostKey& key, const CostEntry& entry);
  static std::optional<std::pair<CostKey, CostEntry>> decode_record(std::string_view line);

 private:
  void load_locked();
  void append_locked(const std::string& line);

  mutable std::mutex mu_;
  std::map<CostKey, CostEntry> map_;
  std::filesystem::path path_;
  int fd_ = -1;
  CostDatabaseStats stats_;
};

// ~/.cache/tessera/costs.db ($XDG_CACHE_HOME/tessera/costs.db when set).
std::filesystem::path default_cost_database_path();

// Writes C = A then B replayed (B wins on equal keys), one record per key, sorted, atomically
// (temporary file + rename). Returns the number of entries written. Inputs may be the output.
size_t merge_cost_databases(const std::filesystem::path& a, const std::filesystem::path& b,
                            const std::filesystem::path& out);

}  // namespace tessera
