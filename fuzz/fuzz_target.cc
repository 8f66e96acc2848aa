#include "fuzz_target.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace tessera::fuzz {

std::string write_temp(std::string_view bytes, const char* ext) {
  const char* dir = std::getenv("TMPDIR");
  std::filesystem::path path = std::filesystem::path(dir && *dir ? dir : "/tmp") /
                               ("tessera_fuzz_" + std::to_string(::getpid()) + ext);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) finding("harness", "cannot write " + path.string());
  return path.string();
}

std::string source_path(const char* relative) { return std::string(TESSERA_SOURCE_DIR) + "/" + relative; }

}  // namespace tessera::fuzz
