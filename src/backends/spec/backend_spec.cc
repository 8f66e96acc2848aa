// Loading and validating `tessera.backend` v1 specs, and building a backend's partition rule.
#include "tessera/backend_spec.h"

#include "backends/spec/backend_spec_detail.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tessera/error.h"
#include "ir/op_registry.h"
#include "support/text.h"

namespace tessera {
namespace {

using nlohmann::json;

const std::set<std::string>& known_fields() {
  static const std::set<std::string> f{"format", "version", "name", "device", "description", "ops",
                                       "patterns", "fusion", "max_depth", "max_exits", "allow_taps",
                                       "boundary_layout", "dtypes"};
  return f;
}

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// "line L, column C" of a byte offset, for JSON syntax errors.
std::string line_column(const std::string& text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

class SpecReader {
 public:
  explicit SpecReader(const std::string& file) : file_(file) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw UserError(file_, field, what);
  }

  std::string string_field(const json& j, const std::string& key, const std::string& field) const {
    if (!j.contains(key)) fail(field, "missing (a string is required)");
    if (!j[key].is_string()) fail(field, "expected a string, found " + std::string(j[key].type_name()));
    return j[key].get<std::string>();
  }

  int limit_field(const json& j, const std::string& key, int dflt) const {
    if (!j.contains(key)) return dflt;
    const json& v = j[key];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1000000)
      fail(key, "expected a non-negative integer (0 = no limit), found " + v.dump());
    return static_cast<int>(v.get<int64_t>());
  }

  void check_op(const std::string& op, const std::string& field) const {
    if (!find_op(op))
      fail(field, "op '" + op + "' is unknown to tessera's op registry (ONNX op names, case-sensitive)");
  }

  BackendSpec read(const json& j) const {
    if (!j.is_object()) fail("", "expected a JSON object with \"format\": \"tessera.backend\"");
    for (const auto& [key, value] : j.items())
      if (!known_fields().count(key)) fail(key, "unknown field (known: " + joined(known_fields()) + ")");
    if (string_field(j, "format", "format") != "tessera.backend")
      fail("format", "expected \"tessera.backend\", found " + j["format"].dump());
    if (!j.contains("version")) fail("version", "missing (this tessera reads version 1)");
    if (!j["version"].is_number_integer() || j["version"].get<int64_t>() != 1)
      fail("version", "unsupported version " + j["version"].dump() + " (this tessera reads version 1)");

    BackendSpec spec;
    spec.source = file_;
    spec.name = string_field(j, "name", "name");
    if (spec.name.empty() || !std::all_of(spec.name.begin(), spec.name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
        }))
      fail("name", "expected a non-empty name of letters, digits, '_' or '-', found \"" + spec.name + "\"");
    if (j.contains("device")) spec.device = string_field(j, "device", "device");
    if (spec.device.empty()) fail("device", "must not be empty");
    if (j.contains("boundary_layout") && !parse_layout(string_field(j, "boundary_layout", "boundary_layout"), spec.detail().boundary_layout))
      fail("boundary_layout", "expected \"plain\" or \"nhwc\"");
    if (j.contains("description")) string_field(j, "description", "description");

    read_ops(j, spec);
    read_patterns(j, spec);
    read_dtypes(j, spec);
    if (!spec.all_ops && spec.ops.empty() && spec.detail().patterns.empty())
      fail("ops", "missing: a backend needs \"ops\" (a list or \"*\") or \"patterns\"");

    if (j.contains("fusion")) {
      std::string style = string_field(j, "fusion", "fusion");
      if (style == "none") spec.detail().fusion = FusionStyle::None;
      else if (style == "tvm") spec.detail().fusion = FusionStyle::Tvm;
      else if (style == "arbitrary") spec.detail().fusion = FusionStyle::Arbitrary;
      else fail("fusion", "unknown fusion style \"" + style + "\" (expected none, tvm or arbitrary)");
    }
    spec.detail().limits.max_depth = limit_field(j, "max_depth", 0);
    spec.detail().limits.max_exits = limit_field(j, "max_exits", 1);
    if (j.contains("allow_taps")) {
      if (!j["allow_taps"].is_boolean()) fail("allow_taps", "expected true or false, found " + j["allow_taps"].dump());
      spec.detail().limits.allow_taps = j["allow_taps"].get<bool>();
    }
    return spec;
  }

 private:
  void read_ops(const json& j, BackendSpec& spec) const {
    if (!j.contains("ops")) return;
    const json& ops = j["ops"];
    if (ops.is_string()) {
      if (ops.get<std::string>() != "*") fail("ops", "expected \"*\" or a list of op names, found " + ops.dump());
      spec.all_ops = true;
      return;
    }
    if (!ops.is_array()) fail("ops", "expected \"*\" or a list of op names, found " + std::string(ops.type_name()));
    for (size_t i = 0; i < ops.size(); ++i) {
      std::string field = "ops[" + std::to_string(i) + "]";
      if (!ops[i].is_string()) fail(field, "expected an op name, found " + ops[i].dump());
      std::string op = ops[i].get<std::string>();
      if (op == "*") fail(field, "\"*\" must be the whole value: \"ops\": \"*\"");
      check_op(op, field);
      spec.ops.push_back(op);
    }
    std::sort(spec.ops.begin(), spec.ops.end());
    spec.ops.erase(std::unique(spec.ops.begin(), spec.ops.end()), spec.ops.end());
  }

  void read_patterns(const json& j, BackendSpec& spec) const {
    if (!j.contains("patterns")) return;
    const json& patterns = j["patterns"];
    if (!patterns.is_array()) fail("patterns", "expected a list of {\"name\", \"pattern\"} objects");
    std::set<std::string> names;
    for (size_t i = 0; i < patterns.size(); ++i) {
      std::string field = "patterns[" + std::to_string(i) + "]";
      const json& p = patterns[i];
      if (!p.is_object()) fail(field, "expected an object {\"name\": ..., \"pattern\": ...}");
      for (const auto& [key, value] : p.items())
        if (key != "name" && key != "pattern")
          fail(field + "." + key, "unknown field (known: name, pattern)");
      CompositeSpec c;
      c.name = string_field(p, "name", field + ".name");
      if (c.name.empty()) fail(field + ".name", "must not be empty");
      if (!names.insert(c.name).second) fail(field + ".name", "duplicate pattern name \"" + c.name + "\"");
      c.text = string_field(p, "pattern", field + ".pattern");
      c.pattern = parse_pattern(c.text, file_, field + ".pattern");
      for (const auto& op : c.pattern->op_names()) check_op(op, field + ".pattern");
      spec.detail().patterns.push_back(std::move(c));
    }
  }

  // "dtypes": a list of dtype names for every op, or an object op -> list with "*" for the rest,
  // where "Op[i]" keys give input i of Op a list of its own.
  void read_dtypes(const json& j, BackendSpec& spec) const {
    if (!j.contains("dtypes")) return;
    const json& d = j["dtypes"];
    spec.detail().dtypes.all = false;
    if (d.is_array()) {
      spec.detail().dtypes.default_dtypes = dtype_list(d, "dtypes");
      return;
    }
    if (!d.is_object())
      fail("dtypes", "expected a list of dtype names or an object {\"*\": [...], \"Op\": [...]}, found " + std::string(d.type_name()));
    if (!d.contains("*")) fail("dtypes", "missing \"*\": the dtypes of the ops without a list of their own");
    for (const auto& [op, list] : d.items()) {
      const std::string field = "dtypes." + op;
      if (op == "*") {
        spec.detail().dtypes.default_dtypes = dtype_list(list, field);
      } else if (const size_t open = op.find('['); open != std::string::npos) {   // "Op[i]": operand i of Op
        const std::string base = op.substr(0, open), index = op.substr(open + 1, op.size() >= open + 2 ? op.size() - open - 2 : 0);
        if (op.back() != ']' || index.empty() || index.size() > 3 ||
            !std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; }))
          fail(field, "expected an op name or Op[i] (input i of Op, such as \"QLinearConv[3]\")");
        check_op(base, field);
        spec.detail().dtypes.per_input[base][static_cast<size_t>(std::stoi(index))] = dtype_list(list, field);
      } else {
        check_op(op, field);
        spec.detail().dtypes.per_op[op] = dtype_list(list, field);
      }
    }
  }

  std::vector<DType> dtype_list(const json& list, const std::string& field) const {
    if (!list.is_array() || list.empty()) fail(field, "expected a non-empty list of dtype names such as [\"f32\", \"f16\"]");
    std::vector<DType> out;
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string at = field + "[" + std::to_string(i) + "]";
      if (!list[i].is_string()) fail(at, "expected a dtype name, found " + list[i].dump());
      auto t = dtype_from_name(list[i].get<std::string>());
      if (!t) fail(at, "unknown dtype \"" + list[i].get<std::string>() + "\" (f32, f16, bf16, f64, i64, i32, i8, u8, bool)");
      if (std::find(out.begin(), out.end(), *t) == out.end()) out.push_back(*t);
    }
    return out;
  }

  const std::string& file_;
};

}  // namespace

BackendSpec::BackendSpec() : detail_(std::make_unique<BackendSpecDetail>()) {}
BackendSpec::~BackendSpec() = default;
BackendSpec::BackendSpec(const BackendSpec& o)
    : name(o.name), device(o.device), all_ops(o.all_ops), ops(o.ops), source(o.source),
      detail_(std::make_unique<BackendSpecDetail>(*o.detail_)) {}
BackendSpec::BackendSpec(BackendSpec&& o) noexcept : BackendSpec(static_cast<const BackendSpec&>(o)) {}
BackendSpec& BackendSpec::operator=(const BackendSpec& o) {
  if (this != &o) {
    name = o.name;
    device = o.device;
    all_ops = o.all_ops;
    ops = o.ops;
    source = o.source;
    *detail_ = *o.detail_;
  }
  return *this;
}
BackendSpec& BackendSpec::operator=(BackendSpec&& o) noexcept { return *this = static_cast<const BackendSpec&>(o); }

bool BackendSpec::supports(const std::string& op) const {
  if (all_ops || std::binary_search(ops.begin(), ops.end(), op)) return true;
  for (const auto& p : detail_->patterns)
    for (const auto& name : p.pattern->op_names())
      if (name == op) return true;
  return false;
}

PartitionRulePtr BackendSpec::make_rule() const {
  const BackendSpecDetail& d = *detail_;
  const auto& patterns = d.patterns;
  const auto& limits = d.limits;
  std::vector<PartitionRulePtr> seeds;
  if (all_ops) seeds.push_back(make_single_op_rule(name + ".single", {"*"}));
  else if (!ops.empty()) seeds.push_back(make_single_op_rule(name + ".single", ops));
  if (!patterns.empty()) seeds.push_back(make_composite_rule(name + ".composite", patterns));
  PartitionRulePtr seed = seeds.size() == 1 ? std::move(seeds.front())
                                            : make_union_rule(name + ".seeds", std::move(seeds));
  if (!d.dtypes.all) seed = make_dtype_rule(name + ".dtypes", std::move(seed), d.dtypes);
  FusionOptions fusion_options;
  fusion_options.style = d.fusion;
  fusion_options.max_depth = limits.max_depth;
  fusion_options.max_exits = limits.max_exits;
  PartitionRulePtr fused = make_fusion_rule(name + ".fusion", std::move(seed), fusion_options);
  return make_only_valid_rule(name + ".valid", std::move(fused), limits);
}

BackendSpec parse_backend_spec(const std::string& json_text, const std::string& file) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    // nlohmann's message starts "[json.exception.parse_error.101] parse error at line 1, ...: "
    auto colon = what.find(": ");
    throw UserError(file, line_column(json_text, e.byte > 0 ? e.byte - 1 : 0),
                    "invalid JSON: " + (colon == std::string::npos ? what : what.substr(colon + 2)));
  } catch (const json::exception& e) {
    // A number out of range ("1e400": out_of_range.406) is the other way parsing fails.
    throw UserError(file, "", "invalid JSON: " + json_error_text(e.what()));
  }
  return SpecReader(file).read(j);
}

BackendSpec load_backend_spec(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path, "", "cannot read the backend spec file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_backend_spec(buffer.str(), path);
}

}  // namespace tessera
