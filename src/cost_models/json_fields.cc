// Strict JSON field reading with file + path errors. See json_fields.h.
#include "cost_models/json_fields.h"

#include <cmath>
#include <limits>

#include "tessera/error.h"
#include "support/text.h"

namespace tessera::cost_detail {

using nlohmann::json;

namespace {
std::string child(const std::string& path, std::string_view key) {
  return path + "/" + std::string(key);
}

std::string type_name(const json& j) { return j.type_name(); }
}  // namespace

json JsonFields::parse(std::string_view text) const {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    size_t line = 1, col = 1;
    for (size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw UserError(file_, std::to_string(line) + ":" + std::to_string(col), "invalid JSON");
  } catch (const json::exception& e) {
    // A number out of range ("1e400": out_of_range.406) is the other way parsing fails.
    throw UserError(file_, "", "invalid JSON: " + json_error_text(e.what()));
  }
}

void JsonFields::fail(const std::string& path, const std::string& what) const {
  throw UserError(file_, path.empty() ? "/" : path, what);
}

void JsonFields::expect_object(const json& j, const std::string& path) const {
  if (!j.is_object()) fail(path, "expected an object, got " + type_name(j));
}

void JsonFields::expect_object(const json& j, const std::string& path,
                               std::initializer_list<std::string_view> allowed) const {
  expect_object(j, path);
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || a == key;
    if (!known) fail(child(path, key), "unknown field");
  }
}

std::optional<double> JsonFields::number(const json& obj, const std::string& path, const char* key,
                                         bool required) const {
  auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) fail(child(path, key), "missing field");
    return std::nullopt;
  }
  if (!it->is_number()) fail(child(path, key), "expected a number, got " + type_name(*it));
  double x = it->get<double>();
  if (!std::isfinite(x)) fail(child(path, key), "expected a finite number");
  return x;
}

std::optional<std::string> JsonFields::string(const json& obj, const std::string& path,
                                              const char* key, bool required) const {
  auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) fail(child(path, key), "missing field");
    return std::nullopt;
  }
  if (!it->is_string()) fail(child(path, key), "expected a string, got " + type_name(*it));
  return it->get<std::string>();
}

double JsonFields::in_range(double x, const std::string& path, double lo, bool lo_open, double hi,
                            bool hi_open) const {
  bool ok = (lo_open ? x > lo : x >= lo) && (hi_open ? x < hi : x <= hi);
  if (!ok) {
    auto num = [](double v) {
      if (std::isinf(v)) return std::string(v > 0 ? "inf" : "-inf");
      std::string s = std::to_string(v);
      while (s.size() > 1 && s.back() == '0') s.pop_back();
      if (s.back() == '.') s.pop_back();
      return s;
    };
    fail(path, "must be in " + std::string(lo_open ? "(" : "[") + num(lo) + ", " + num(hi) +
                   (hi_open ? ")" : "]") + ", got " + num(x));
  }
  return x;
}

void JsonFields::expect_header(const json& obj, std::string_view format) const {
  auto f = string(obj, "", "format", true);
  if (*f != format) fail("/format", "expected \"" + std::string(format) + "\", got \"" + *f + "\"");
  auto it = obj.find("version");
  if (it == obj.end()) fail("/version", "missing field");
  if (!it->is_number_integer() || it->get<int64_t>() != 1) fail("/version", "expected 1");
}

}  // namespace tessera::cost_detail
