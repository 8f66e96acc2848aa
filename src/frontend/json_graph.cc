// tessera's JSON graph format, version 1 (docs/formats.md). Every field is checked and a wrong one
// is named by its JSON path ("nodes[3].inputs[1]"); unknown fields are errors too, so a typo
// cannot silently change a graph.
#include "frontend/json_graph.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <set>

#include "frontend/graph_builder.h"
#include "tessera/error.h"
#include "support/text.h"

namespace tessera {
namespace {

using nlohmann::json;

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& place, const std::string& what) const { throw UserError(file_, place, what); }

  const json& field(const json& obj, const std::string& path, const char* key) const {
    if (!obj.contains(key)) fail(path, std::string("missing field '") + key + "'");
    return obj.at(key);
  }
  void check_fields(const json& obj, const std::string& path, std::initializer_list<const char*> allowed) const {
    if (!obj.is_object()) fail(path, "expected an object");
    for (const auto& [key, _] : obj.items()) {
      bool ok = false;
      for (const char* a : allowed) ok |= key == a;
      if (!ok) fail(path + "." + key, "unknown field");
    }
  }
  std::string string(const json& j, const std::string& path) const {
    if (!j.is_string()) fail(path, "expected a string, got " + std::string(j.type_name()));
    return j.get<std::string>();
  }
  int64_t integer(const json& j, const std::string& path) const {
    if (!j.is_number_integer()) fail(path, "expected an integer, got " + std::string(j.type_name()));
    return j.get<int64_t>();
  }
  const json& array(const json& j, const std::string& path) const {
    if (!j.is_array()) fail(path, "expected an array, got " + std::string(j.type_name()));
    return j;
  }
  TensorType type(const json& obj, const std::string& path) const {
    std::string dt = string(field(obj, path, "dtype"), path + ".dtype");
    auto dtype = dtype_from_name(dt);
    if (!dtype) fail(path + ".dtype", "unknown dtype '" + dt + "' (f32, f16, bf16, f64, i64, i32, i8, u8, bool)");
    TensorType t{*dtype, {}};
    const json& shape = array(field(obj, path, "shape"), path + ".shape");
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t d = integer(shape[i], path + ".shape[" + std::to_string(i) + "]");
      if (d < 0) fail(path + ".shape[" + std::to_string(i) + "]", "negative dimension");
      t.shape.push_back(d);
    }
    return t;
  }
  TensorData data(const json& j, const TensorType& t, const std::string& path) const {
    array(j, path);
    if (static_cast<int64_t>(j.size()) != t.numel())
      fail(path, std::to_string(j.size()) + " values for " + to_string(t) + " (" + std::to_string(t.numel()) + " elements)");
    auto bytes = std::make_shared<TensorBytes>(t.bytes());
    for (size_t i = 0; i < j.size(); ++i) {
      const std::string p = path + "[" + std::to_string(i) + "]";
      if (!j[i].is_number() && !j[i].is_boolean()) fail(p, "expected a number");
      double v = j[i].is_boolean() ? j[i].get<bool>() : j[i].get<double>();
      void* dst = bytes->data() + i * dtype_size(t.dtype);
      auto put = [&](auto x) { std::memcpy(dst, &x, sizeof x); };
      // An integer element must fit its dtype (converting 1e300 to int32 is undefined behaviour).
      auto fits = [&](double lo, double hi) {
        if (!(v >= lo && v <= hi)) fail(p, "value out of range for " + std::string(dtype_name(t.dtype)));
      };
      if (t.dtype == DType::i64 && !j[i].is_number_integer()) fits(-0x1p63, 0x1p63 - 1024);
      if (t.dtype == DType::i32) fits(INT32_MIN, INT32_MAX);
      if (t.dtype == DType::i8) fits(INT8_MIN, INT8_MAX);
      if (t.dtype == DType::u8 || t.dtype == DType::boolean) fits(0, UINT8_MAX);
      switch (t.dtype) {
        case DType::f32: put(static_cast<float>(v)); break;
        case DType::f64: put(v); break;
        case DType::i64: put(j[i].is_number_integer() ? j[i].get<int64_t>() : static_cast<int64_t>(v)); break;
        case DType::i32: put(static_cast<int32_t>(v)); break;
        case DType::i8: put(static_cast<int8_t>(v)); break;
        case DType::u8:
        case DType::boolean: put(static_cast<uint8_t>(v)); break;
        case DType::f16:
        case DType::bf16: fail(path, "inline data for " + std::string(dtype_name(t.dtype)) + " is not supported");
      }
    }
    return bytes;
  }
  Attribute attribute(const json& j, const std::string& path) const {
    if (j.is_number_integer()) return j.get<int64_t>();
    if (j.is_number_float()) return j.get<double>();
    if (j.is_string()) return j.get<std::string>();
    if (j.is_boolean()) return static_cast<int64_t>(j.get<bool>());
    if (j.is_object()) {  // a tensor attribute
      check_fields(j, path, {"dtype", "shape", "data"});
      TensorType t = type(j, path);
      return Tensor{t, j.contains("data") ? data(j["data"], t, path + ".data") : nullptr};
    }
    if (!j.is_array()) fail(path, "unsupported attribute value");
    bool all_int = true, all_num = true, all_str = true;
    for (const auto& x : j) {
      all_int &= x.is_number_integer();
      all_num &= x.is_number();
      all_str &= x.is_string();
    }
    if (all_int) return j.get<std::vector<int64_t>>();
    if (all_num) return j.get<std::vector<double>>();
    if (all_str) return j.get<std::vector<std::string>>();
    fail(path, "a list attribute must hold only numbers or only strings");
  }

 private:
  std::string file_;
};

}  // namespace

namespace {

// A graph object at JSON path `at` ("" for the top level, else "nodes[3].attrs.then_branch.graph.");
// `options` is null for a sub-graph (ImportOptions::input_shapes binds the top level's inputs only).
std::shared_ptr<detail::RawGraph> raw_from_json(const json& j, const Reader& r, const std::string& at,
                                                const ImportOptions* options) {
  auto raw_ptr = std::make_shared<detail::RawGraph>();
  detail::RawGraph& raw = *raw_ptr;
  const std::string root = at.empty() ? "$" : at.substr(0, at.size() - 1);
  r.check_fields(j, root, {"format", "version", "name", "opset", "inputs", "constants", "nodes", "outputs"});
  if (r.string(r.field(j, root, "format"), "format") != "tessera.graph")
    r.fail(at + "format", "expected \"tessera.graph\"");
  if (r.integer(r.field(j, root, "version"), at + "version") != 1) r.fail(at + "version", "only version 1 is supported");
  raw.name = j.contains("name") ? r.string(j["name"], at + "name") : "";
  raw.opset = j.contains("opset") ? static_cast<int>(r.integer(j["opset"], at + "opset")) : 17;
  if (raw.opset < 7 || raw.opset > 17) r.fail(at + "opset", "opset " + std::to_string(raw.opset) + " is outside 7-17");

  const json& inputs = r.array(r.field(j, root, "inputs"), at + "inputs");
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string p = at + "inputs[" + std::to_string(i) + "]";
    r.check_fields(inputs[i], p, {"name", "dtype", "shape"});
    std::string name = r.string(r.field(inputs[i], p, "name"), p + ".name");
    TensorType t = r.type(inputs[i], p);
    if (options)
      if (auto it = options->input_shapes.find(name); it != options->input_shapes.end()) t.shape = it->second;
    raw.inputs.emplace_back(name, t);
  }
  if (j.contains("constants")) {
    const json& consts = r.array(j["constants"], at + "constants");
    for (size_t i = 0; i < consts.size(); ++i) {
      const std::string p = at + "constants[" + std::to_string(i) + "]";
      r.check_fields(consts[i], p, {"name", "dtype", "shape", "data"});
      TensorType t = r.type(consts[i], p);
      TensorData d = consts[i].contains("data") ? r.data(consts[i]["data"], t, p + ".data") : nullptr;
      raw.constants.emplace_back(r.string(r.field(consts[i], p, "name"), p + ".name"), Tensor{t, d});
    }
  }
  const json& nodes = r.array(r.field(j, root, "nodes"), at + "nodes");
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string p = at + "nodes[" + std::to_string(i) + "]";
    const json& nj = nodes[i];
    r.check_fields(nj, p, {"name", "op", "domain", "inputs", "outputs", "attrs"});
    detail::RawNode n;
    n.place = p;
    n.name = nj.contains("name") ? r.string(nj["name"], p + ".name") : "";
    n.op = r.string(r.field(nj, p, "op"), p + ".op");
    if (n.op.empty()) r.fail(p + ".op", "empty op name");
    n.domain = nj.contains("domain") ? r.string(nj["domain"], p + ".domain") : "";
    const json& ins = r.array(r.field(nj, p, "inputs"), p + ".inputs");
    for (size_t k = 0; k < ins.size(); ++k) n.inputs.push_back(r.string(ins[k], p + ".inputs[" + std::to_string(k) + "]"));
    const json& outs = r.array(r.field(nj, p, "outputs"), p + ".outputs");
    for (size_t k = 0; k < outs.size(); ++k) {
      const std::string op = p + ".outputs[" + std::to_string(k) + "]";
      if (outs[k].is_object()) {
        r.check_fields(outs[k], op, {"name", "dtype", "shape"});
        n.outputs.push_back(r.string(r.field(outs[k], op, "name"), op + ".name"));
        n.output_types.push_back(r.type(outs[k], op));
      } else {
        n.outputs.push_back(r.string(outs[k], op));
        n.output_types.push_back(std::nullopt);
      }
    }
    if (nj.contains("attrs")) {
      if (!nj["attrs"].is_object()) r.fail(p + ".attrs", "expected an object");
      for (const auto& [key, val] : nj["attrs"].items()) {
        const std::string ap = p + ".attrs." + key;
        if (val.is_object() && val.contains("graph")) {  // a sub-graph attribute
          r.check_fields(val, ap, {"graph"});
          n.subgraphs.emplace_back(key, raw_from_json(val["graph"], r, ap + ".graph.", nullptr));
          n.attrs[key] = "graph:" + n.subgraphs.back().second->name;
        } else {
          n.attrs[key] = r.attribute(val, ap);
        }
      }
    }
    raw.nodes.push_back(std::move(n));
  }
  const json& outs = r.array(r.field(j, root, "outputs"), at + "outputs");
  for (size_t k = 0; k < outs.size(); ++k) raw.outputs.push_back(r.string(outs[k], at + "outputs[" + std::to_string(k) + "]"));
  return raw_ptr;
}

}  // namespace

Graph graph_from_json(const json& j, const std::string& file, const ImportOptions& options) {
  Reader r(file);
  return detail::build_graph(*raw_from_json(j, r, "", &options), file);
}

Graph import_json(const std::string& path, const ImportOptions& options) {
  std::ifstream in(path);
  if (!in) throw UserError(path, "", "cannot open the file");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    // nlohmann reports "[json.exception.parse_error.101] parse error at line 3, column 5: ..."
    std::string what = e.what();
    auto at = what.find("at line");
    throw UserError(path, "", "JSON syntax error " + (at == std::string::npos ? what : what.substr(at)));
  } catch (const json::exception& e) {
    // A number out of range ("1e400": out_of_range.406) is the other way parsing fails.
    throw UserError(path, "", "invalid JSON: " + json_error_text(e.what()));
  }
  return graph_from_json(j, path, options);
}

namespace {

json type_json(const TensorType& t) { return json{{"dtype", std::string(dtype_name(t.dtype))}, {"shape", t.shape}}; }

json data_json(const TensorType& t, const TensorBytes& bytes) {
  json out = json::array();
  for (int64_t i = 0; i < t.numel(); ++i) {
    const uint8_t* p = bytes.data() + i * dtype_size(t.dtype);
    auto get = [&](auto x) {
      std::memcpy(&x, p, sizeof x);
      return x;
    };
    switch (t.dtype) {
      case DType::f32: out.push_back(get(float{})); break;
      case DType::f64: out.push_back(get(double{})); break;
      case DType::i64: out.push_back(get(int64_t{})); break;
      case DType::i32: out.push_back(get(int32_t{})); break;
      case DType::i8: out.push_back(get(int8_t{})); break;
      case DType::u8:
      case DType::boolean: out.push_back(get(uint8_t{})); break;
      case DType::f16:
      case DType::bf16: return nullptr;
    }
  }
  return out;
}

json attribute_json(const Attribute& a) {
  return std::visit(
      [](const auto& v) -> json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, GraphAttr>) {
          return json{{"graph", v.graph ? graph_to_json(*v.graph) : json::object()}};
        } else if constexpr (std::is_same_v<T, Tensor>) {
          json t = type_json(v.type);
          if (v.data) {
            json d = data_json(v.type, *v.data);
            if (!d.is_null()) t["data"] = d;
          }
          return t;
        } else {
          return json(v);
        }
      },
      a);
}

}  // namespace

json graph_to_json(const Graph& g, size_t max_data_elements) {
  json j{{"format", "tessera.graph"}, {"version", 1}, {"name", g.name}, {"opset", g.opset}};
  j["inputs"] = json::array();
  for (ValueId v : g.inputs) {
    json in = type_json(g.value(v).type);
    in["name"] = g.value(v).name;
    j["inputs"].push_back(in);
  }
  j["constants"] = json::array();
  for (const Value& v : g.values) {
    if (!v.is_constant()) continue;
    json c = type_json(v.type);
    c["name"] = v.name;
    if (v.data && (max_data_elements == 0 || static_cast<size_t>(v.type.numel()) <= max_data_elements)) {
      json d = data_json(v.type, *v.data);
      if (!d.is_null()) c["data"] = d;
    }
    j["constants"].push_back(c);
  }
  j["nodes"] = json::array();
  for (const Node& n : g.nodes) {
    json nj{{"name", n.name}, {"op", n.op}};
    if (!n.domain.empty()) nj["domain"] = n.domain;
    nj["inputs"] = json::array();
    for (ValueId v : n.inputs) nj["inputs"].push_back(v == kNoValue ? "" : g.value(v).name);
    nj["outputs"] = json::array();
    for (ValueId v : n.outputs) {
      json o = type_json(g.value(v).type);
      o["name"] = g.value(v).name;
      nj["outputs"].push_back(o);
    }
    if (!n.attrs.empty()) {
      json attrs = json::object();
      for (const auto& [k, a] : n.attrs) attrs[k] = attribute_json(a);
      nj["attrs"] = attrs;
    }
    j["nodes"].push_back(nj);
  }
  j["outputs"] = json::array();
  for (ValueId v : g.outputs) j["outputs"].push_back(g.value(v).name);
  return j;
}

}  // namespace tessera
