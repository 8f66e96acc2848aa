// Device profiles: the tessera.device format, its loader and the data-file lookup.
// See src/cost_models/device_profile.h and docs/formats.md.
#include "cost_models/device_profile.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "cost_models/json_fields.h"
#include "tessera/error.h"
#include "ir/structural_hash.h"

namespace tessera {

using nlohmann::json;
using cost_detail::JsonFields;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string read_file(const std::filesystem::path& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path.string(), "", std::string("cannot read ") + what);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

double positive(const JsonFields& f, const json& obj, const std::string& path, const char* key) {
  return f.in_range(*f.number(obj, path, key, true), path + "/" + key, 0, true, kInf, true);
}

json to_json(const DeviceProfile& p) {
  json j = {{"format", "tessera.device"}, {"version", 1},          {"name", p.name},
            {"device", p.device},         {"source", p.source},    {"peak_gflops", p.peak_gflops},
            {"bandwidth_gbs", p.bandwidth_gbs}, {"call_overhead_us", p.call_overhead_us}};
  if (!p.machine.empty()) j["machine"] = p.machine;   // absent in older profiles: fingerprint kept
  if (p.link) j["link"] = {{"bandwidth_gbs", p.link->bandwidth_gbs}, {"latency_us", p.link->latency_us}};
  j["efficiency"] = json::object();
  for (const auto& [backend, e] : p.efficiency) {
    j["efficiency"][backend] = {{"compute", e.compute}, {"memory", e.memory}};
    // Only when set: profiles without it keep their canonical JSON, hence their fingerprint.
    if (e.call_overhead_us) j["efficiency"][backend]["call_overhead_us"] = *e.call_overhead_us;
    if (e.int8_speedup) j["efficiency"][backend]["int8_speedup"] = *e.int8_speedup;
  }
  return j;
}
}  // namespace

const Efficiency& DeviceProfile::efficiency_for(std::string_view backend) const {
  auto it = efficiency.find(std::string(backend));
  if (it != efficiency.end()) return it->second;
  auto d = efficiency.find("default");
  TESSERA_CHECK(d != efficiency.end(), "device profile '" + name + "' without a default efficiency");
  return d->second;
}

std::string DeviceProfile::fingerprint() const {
  json j = to_json(*this);
  j.erase("source");   // provenance, not a number the costs depend on
  return name + "/" + hash_hex(fnv1a64(j.dump()));
}

DeviceProfile parse_device_profile(std::string_view text, const std::string& file) {
  JsonFields f(file);
  json root = f.parse(text);
  f.expect_object(root, "", {"format", "version", "name", "device", "source", "peak_gflops",
                             "bandwidth_gbs", "call_overhead_us", "link", "efficiency", "machine"});
  f.expect_header(root, "tessera.device");
  DeviceProfile p;
  p.file = file;
  p.name = *f.string(root, "", "name", true);
  if (p.name.empty()) f.fail("/name", "must not be empty");
  p.device = *f.string(root, "", "device", true);
  if (p.device.empty()) f.fail("/device", "must not be empty");
  p.source = *f.string(root, "", "source", true);
  if (auto m = f.string(root, "", "machine", false)) p.machine = *m;
  p.peak_gflops = positive(f, root, "", "peak_gflops");
  p.bandwidth_gbs = positive(f, root, "", "bandwidth_gbs");
  p.call_overhead_us = f.in_range(*f.number(root, "", "call_overhead_us", true), "/call_overhead_us", 0,
                                  false, kInf, true);
  if (auto it = root.find("link"); it != root.end() && !it->is_null()) {
    f.expect_object(*it, "/link", {"bandwidth_gbs", "latency_us"});
    LinkProfile l;
    l.bandwidth_gbs = positive(f, *it, "/link", "bandwidth_gbs");
    l.latency_us = f.in_range(*f.number(*it, "/link", "latency_us", true), "/link/latency_us", 0, false,
                              kInf, true);
    p.link = l;
  }
  auto eff = root.find("efficiency");
  if (eff == root.end()) f.fail("/efficiency", "missing field");
  f.expect_object(*eff, "/efficiency");
  for (const auto& [backend, e] : eff->items()) {
    std::string path = "/efficiency/" + backend;
    f.expect_object(e, path, {"compute", "memory", "call_overhead_us", "int8_speedup"});
    Efficiency x;
    x.compute = f.in_range(*f.number(e, path, "compute", true), path + "/compute", 0, true, 1, false);
    x.memory = f.in_range(*f.number(e, path, "memory", true), path + "/memory", 0, true, 1, false);
    if (auto o = f.number(e, path, "call_overhead_us", false)) {
      x.call_overhead_us = f.in_range(*o, path + "/call_overhead_us", 0, false, kInf, true);
    }
    if (auto o = f.number(e, path, "int8_speedup", false)) {
      x.int8_speedup = f.in_range(*o, path + "/int8_speedup", 0, true, 64, false);
    }
    p.efficiency[backend] = x;
  }
  if (!p.efficiency.count("default")) f.fail("/efficiency/default", "missing field");
  return p;
}

DeviceProfile load_device_profile(const std::filesystem::path& path) {
  return parse_device_profile(read_file(path, "device profile"), path.string());
}

std::string device_profile_to_json(const DeviceProfile& p) { return to_json(p).dump(2) + "\n"; }

void save_device_profile(const DeviceProfile& p, const std::filesystem::path& path) {
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw UserError(path.string(), "", "cannot write device profile");
    out << device_profile_to_json(p);
    out.flush();
    if (!out) throw UserError(path.string(), "", "cannot write device profile");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw UserError(path.string(), "", "cannot write device profile");
  }
}

namespace {
// The data/ folders find_data_file looks in, in order, each once: build/data and the source tree's
// data/ are often one folder reached by two paths.
std::vector<std::filesystem::path> data_roots() {
  namespace fs = std::filesystem;
  std::vector<fs::path> roots;
  if (const char* env = std::getenv("TESSERA_DATA_DIR"); env && *env) roots.emplace_back(env);
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    // build/tessera -> build/data, then the checkout's data/ one and two levels up.
    fs::path dir = exe.parent_path();
    for (int up = 0; up < 3 && !dir.empty(); ++up, dir = dir.parent_path()) roots.push_back(dir / "data");
  }
#ifdef TESSERA_SOURCE_DATA_DIR
  roots.emplace_back(TESSERA_SOURCE_DATA_DIR);
#endif
  std::vector<fs::path> unique;
  for (const fs::path& root : roots) {
    fs::path canon = fs::weakly_canonical(root, ec);
    if (ec) canon = root.lexically_normal();
    if (std::find(unique.begin(), unique.end(), canon) == unique.end()) unique.push_back(canon);
  }
  return unique;
}
}  // namespace

std::filesystem::path find_data_file(std::string_view relative) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string tried;
  for (const fs::path& root : data_roots()) {
    fs::path p = root / relative;
    if (fs::is_regular_file(p, ec)) return p;
    tried += (tried.empty() ? "" : ", ") + root.string();
  }
  throw UserError(std::string(relative), "", "data file not found (looked in " + tried +
                                                 "; set TESSERA_DATA_DIR)");
}

DeviceProfile resolve_device_profile(std::string_view name_or_path) {
  std::filesystem::path p(name_or_path);
  std::error_code ec;
  if (std::filesystem::is_regular_file(p, ec)) return load_device_profile(p);
  if (name_or_path.find('/') != std::string_view::npos || p.extension() == ".json") {
    throw UserError(std::string(name_or_path), "", "no such device profile");
  }
  const std::string file = "devices/" + std::string(name_or_path) + ".json";
  for (const std::filesystem::path& root : data_roots())
    if (std::filesystem::is_regular_file(root / file, ec)) return load_device_profile(root / file);
  // Not found: name the profiles that do exist, where they are.
  std::string known, where;
  for (const std::filesystem::path& root : data_roots()) {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(root / "devices", ec))
      if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
    if (names.empty()) continue;
    std::sort(names.begin(), names.end());
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    where = (root / file).string();
    break;
  }
  if (known.empty())
    throw UserError(std::string(name_or_path), "", "no such device profile, and no data/devices folder found (set TESSERA_DATA_DIR)");
  throw UserError(std::string(name_or_path), "", "no such device profile: " + where + " does not exist; that folder has " +
                                                   known + " (or give a profile's path)");
}

}  // namespace tessera
