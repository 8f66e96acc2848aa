// The cost database: an append-only log of CRC-checked records. See cost_database.h.
#include "tessera/cost_database.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include "tessera/error.h"

namespace tessera {

using nlohmann::json;

namespace {

std::string errno_text() { return std::strerror(errno); }

// zlib's CRC-32 (IEEE 802.3) of a record's text, as 8 lower-case hex digits.
std::string crc_hex(std::string_view text) {
  const uLong crc = ::crc32(::crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(text.data()),
                            static_cast<uInt>(text.size()));
  char hex[16];
  std::snprintf(hex, sizeof hex, "%08lx", crc);
  return hex;
}

// Holds flock(LOCK_EX) on fd for its lifetime.
class FileLock {
 public:
  explicit FileLock(int fd) : fd_(fd) {
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~FileLock() { ::flock(fd_, LOCK_UN); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

// Replays a log into `map`; counts records and corrupt lines. A missing file is empty.
void replay(std::string_view text, std::map<CostKey, CostEntry>& map, CostDatabaseStats& stats) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty()) continue;
    if (auto rec = CostDatabase::decode_record(line)) {
      map[rec->first] = rec->second;
      ++stats.records;
    } else {
      ++stats.corrupt;
    }
  }
  stats.entries = map.size();
}

std::string read_all(int fd) {
  std::string out;
  char buf[1 << 16];
  off_t off = 0;
  for (;;) {
    ssize_t n = ::pread(fd, buf, sizeof buf, off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    off += n;
  }
  return out;
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

std::string CostKey::to_string() const { return hash + " " + backend + " " + device + " " + model; }

std::string CostDatabase::encode_record(const CostKey& key, const CostEntry& entry) {
  json j = {{"h", key.hash},  {"b", key.backend},         {"d", key.device},     {"m", key.model},
            {"c", entry.cost.to_string()}, {"s", entry.spread}, {"n", entry.samples}};
  if (entry.error) j["e"] = *entry.error;   // only when measured: older records stay byte-identical
  // Compact, sorted keys; JSON escapes any \n or \t inside, so a record is one line.
  std::string text = j.dump(-1, ' ', false, json::error_handler_t::replace);
  return text + "\t" + crc_hex(text);
}

std::optional<std::pair<CostKey, CostEntry>> CostDatabase::decode_record(std::string_view line) {
  size_t tab = line.rfind('\t');
  if (tab == std::string_view::npos || line.size() - tab - 1 != 8) return std::nullopt;
  std::string_view text = line.substr(0, tab);
  if (line.substr(tab + 1) != crc_hex(text)) return std::nullopt;
  try {
    json j = json::parse(text);
    auto cost = Cost::parse(j.at("c").get<std::string>());
    // No measurement is infinite: such a record (hand-made or damaged) would price plans at "inf".
    if (!cost || (cost->is_value() && !std::isfinite(cost->number()))) return std::nullopt;
    CostKey key{j.at("h").get<std::string>(), j.at("b").get<std::string>(), j.at("d").get<std::string>(),
                j.at("m").get<std::string>()};
    if (!j.at("n").is_number_integer()) return std::nullopt;   // get<int64_t> of 1e300 is UB
    CostEntry entry{*cost, j.at("s").get<double>(), j.at("n").get<int64_t>()};
    if (auto e = j.find("e"); e != j.end()) entry.error = e->get<double>();
    return std::make_pair(std::move(key), entry);
  } catch (const json::exception&) {
    return std::nullopt;   // a CRC-valid record of another shape: not ours to trust
  }
}

std::unique_ptr<CostDatabase> CostDatabase::open(const std::filesystem::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw UserError(path.string(), "", "cannot open cost database: " + errno_text());
  auto db = std::make_unique<CostDatabase>();
  db->path_ = path;
  db->fd_ = fd;
  std::lock_guard lock(db->mu_);
  db->load_locked();
  return db;
}

CostDatabase::~CostDatabase() {
  if (fd_ >= 0) ::close(fd_);
}

void CostDatabase::load_locked() { replay(read_all(fd_), map_, stats_); }

void CostDatabase::append_locked(const std::string& line) {
  FileLock lock(fd_);
  std::string buf;
  // A torn tail from a killed writer must not swallow this record: start a fresh line.
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && st.st_size > 0) {
    char last = '\n';
    if (::pread(fd_, &last, 1, st.st_size - 1) == 1 && last != '\n') buf += '\n';
  }
  buf += line;
  buf += '\n';
  if (!write_all(fd_, buf)) throw UserError(path_.string(), "", "cannot append to cost database: " + errno_text());
  ++stats_.appended;
}

std::optional<CostEntry> CostDatabase::lookup(const CostKey& key) const {
  std::lock_guard lock(mu_);
  auto it = map_.find(key);
  if (it == map_.end()) return std::nullopt;
  return it->second;
}

void CostDatabase::insert(const CostKey& key, const CostEntry& entry) {
  std::lock_guard lock(mu_);
  auto [it, fresh] = map_.try_emplace(key, entry);
  if (!fresh) {
    if (it->second == entry) return;   // nothing new: keep the log from growing
    it->second = entry;
  }
  stats_.entries = map_.size();
  if (fd_ >= 0) append_locked(encode_record(key, entry));
}

CostDatabaseStats CostDatabase::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::vector<std::pair<CostKey, CostEntry>> CostDatabase::entries() const {
  std::lock_guard lock(mu_);
  return {map_.begin(), map_.end()};
}

std::filesystem::path default_cost_database_path() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return std::filesystem::path(xdg) / "tessera" / "costs.db";
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : ".") / ".cache" / "tessera" / "costs.db";
}

namespace {
void replay_file(const std::filesystem::path& path, std::map<CostKey, CostEntry>& map) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw UserError(path.string(), "", "cannot read cost database: " + errno_text());
  std::string text = read_all(fd);
  ::close(fd);
  CostDatabaseStats ignored;
  replay(text, map, ignored);
}
}  // namespace

size_t merge_cost_databases(const std::filesystem::path& a, const std::filesystem::path& b,
                            const std::filesystem::path& out) {
  std::map<CostKey, CostEntry> map;
  replay_file(a, map);
  replay_file(b, map);
  std::string text;
  for (const auto& [key, entry] : map) text += CostDatabase::encode_record(key, entry) + "\n";

  std::error_code ec;
  if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path(), ec);
  std::filesystem::path tmp = out;
  tmp += ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw UserError(out.string(), "", "cannot write cost database: " + errno_text());
  bool ok = write_all(fd, text) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), out.c_str()) != 0) {
    std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw UserError(out.string(), "", "cannot write cost database: " + why);
  }
  return map.size();
}

}  // namespace tessera
