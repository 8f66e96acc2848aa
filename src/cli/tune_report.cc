// Writes the tune --report file (see tune_report.h).
#include "cli/tune_report.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tessera/error.h"

namespace tessera::cli {

void write_tune_report(const std::string& path, const TuneReport& r) {
  using nlohmann::json;
  json hosts = json::array(), models = json::array();
  for (const TuneReport::Host& h : r.hosts) hosts.push_back({{"rank", h.rank}, {"host", h.host}, {"machine", h.machine}});
  for (const TuneReport::Model& m : r.models)
    models.push_back({{"model", m.model}, {"plan", m.plan}, {"partitions", m.partitions},
                      {"distinct", m.distinct}, {"predicted_ms", m.predicted_ms}, {"buckets", m.buckets},
                      {"bucket_tune_s", m.bucket_tune_s}});
  json j = {{"ranks", r.ranks},           {"measured_per_rank", r.measured_per_rank},
            {"from_database", r.from_database}, {"invalid", r.invalid},
            {"wall_s", r.wall_s},         {"measure_s", r.measure_s},
            {"candidates", r.candidates}, {"distinct", r.distinct},
            {"database", r.database},     {"redealt", r.redealt},
            {"late", r.late},             {"dead_ranks", r.dead_ranks},
            {"silent_ranks", r.silent_ranks}, {"hosts", hosts},
            {"models", models}};
  std::filesystem::path out(path), tmp = out;
  tmp += ".tmp." + std::to_string(::getpid());
  std::error_code ec;
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << j.dump(2) << "\n";
    f.close();
    if (!f) {
      std::filesystem::remove(tmp, ec);
      throw UserError(path, "", "cannot write report");
    }
  }
  std::filesystem::rename(tmp, out, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw UserError(path, "", "cannot write report: " + ec.message());
  }
}

}  // namespace tessera::cli
