// Golden-file comparison shared by every golden test: `actual` must equal the file's text. With
// TESSERA_UPDATE_GOLDEN=1 (exactly "1"; unset, "0" or anything else compares) the file is
// rewritten instead, for an intended change whose diff is then reviewed.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "support/files.h"

namespace tessera::testing {

inline bool update_golden() {
  const char* u = std::getenv("TESSERA_UPDATE_GOLDEN");
  return u != nullptr && std::string(u) == "1";
}

inline void check_golden(const std::filesystem::path& path, const std::string& actual) {
  if (update_golden()) {
    write_file(path, actual);
    return;
  }
  INFO("golden file " << path.string() << " (TESSERA_UPDATE_GOLDEN=1 rewrites it)");
  REQUIRE(std::filesystem::exists(path));
  CHECK(actual == read_file(path));
}

}  // namespace tessera::testing
