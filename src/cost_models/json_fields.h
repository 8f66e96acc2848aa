// Strict reading of small JSON configuration files (mock costs, device profiles).
//
// Every accessor takes a JSON pointer-style path ("/backends/byoc/decay") and throws
// UserError("FILE: PATH: WHAT") on a missing field, a wrong type or an unknown field, so each
// loader reads as a list of fields and never hand-writes an error message twice. Internal to
// tessera_cost.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tessera::cost_detail {

class JsonFields {
 public:
  explicit JsonFields(std::string file) : file_(std::move(file)) {}

  // Parses text; a syntax error names line:column.
  nlohmann::json parse(std::string_view text) const;

  [[noreturn]] void fail(const std::string& path, const std::string& what) const;

  // `j` must be an object whose keys are all in `allowed`.
  void expect_object(const nlohmann::json& j, const std::string& path,
                     std::initializer_list<std::string_view> allowed) const;
  // `j` must be an object (any keys).
  void expect_object(const nlohmann::json& j, const std::string& path) const;

  // Field accessors on an object `obj` at `path`; nullopt when absent and not required.
  std::optional<double> number(const nlohmann::json& obj, const std::string& path,
                               const char* key, bool required) const;
  std::optional<std::string> string(const nlohmann::json& obj, const std::string& path,
                                    const char* key, bool required) const;
  // A number in [lo, hi] (lo_open/hi_open exclude the bound).
  double in_range(double x, const std::string& path, double lo, bool lo_open, double hi,
                  bool hi_open) const;
  // "format" and "version" fields: exactly `format`, version 1.
  void expect_header(const nlohmann::json& obj, std::string_view format) const;

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};


}  // namespace tessera::cost_detail
