// The machine's identity: CPU model, ISA flags, their fingerprint. See src/cost_models/machine.h.
#include "cost_models/machine.h"

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "ir/structural_hash.h"

namespace tessera {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    size_t b = line.find_first_not_of(" \t", colon + 1);
    if (b != std::string::npos) return line.substr(b);
  }
  return "unknown-cpu";
}

std::string cpu_isa_flags() {
  // Only the flags that choose code paths: microcode and mitigation flags differ between
  // identical machines with other kernels and must not split their measurements.
  static const char* const kIsa[] = {"sse", "ssse3", "avx", "fma", "f16c", "bmi", "amx", "popcnt", "aes",
                                     "sha", "vaes", "vpclmulqdq", "gfni", "movbe", "adx", "asimd", "sve",
                                     "neon", "fp16", "dotprod", "i8mm", "bf16"};
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("flags", 0) != 0 && line.rfind("Features", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::istringstream words(line.substr(colon + 1));
    std::set<std::string> kept;
    for (std::string w; words >> w;)
      for (const char* isa : kIsa)
        if (w.rfind(isa, 0) == 0) kept.insert(w);
    std::string out;
    for (const std::string& w : kept) out += (out.empty() ? "" : " ") + w;
    return out;
  }
  return "";
}

std::string machine_fingerprint() {
  if (const char* forced = std::getenv("TESSERA_MACHINE_FINGERPRINT"); forced && *forced) return forced;
  return cpu_model_name() + "/isa-" + hash_hex(fnv1a64(cpu_isa_flags())).substr(0, 8);
}

}  // namespace tessera
