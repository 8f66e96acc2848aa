#include "tessera/attribute.h"

#include <cstdio>
#include <type_traits>

#include "tessera/graph.h"
#include "ir/structural_hash.h"

namespace tessera {

bool Tensor::operator==(const Tensor& o) const {
  if (!(type == o.type)) return false;
  if (!data || !o.data) return !data && !o.data;
  return *data == *o.data;
}

bool GraphAttr::operator==(const GraphAttr& o) const {
  if (!graph || !o.graph) return !graph && !o.graph;
  return *graph == *o.graph;
}

const Graph* attr_graph(const Attributes& a, const std::string& name) {
  auto it = a.find(name);
  if (it == a.end()) return nullptr;
  auto p = std::get_if<GraphAttr>(&it->second);
  return p ? p->graph.get() : nullptr;
}

namespace {

std::string float_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  // Keep floats recognisable as floats in every text form.
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

template <class T, class F>
std::string list_text(const std::vector<T>& v, F f) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += f(v[i]);
  }
  return out + ']';
}

std::string quoted(const std::string& s) { return '"' + s + '"'; }

}  // namespace

std::string attribute_to_string(const Attribute& a) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) return std::to_string(v);
        else if constexpr (std::is_same_v<T, double>) return float_text(v);
        else if constexpr (std::is_same_v<T, std::string>) return quoted(v);
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
          return list_text(v, [](int64_t x) { return std::to_string(x); });
        else if constexpr (std::is_same_v<T, std::vector<double>>) return list_text(v, float_text);
        else if constexpr (std::is_same_v<T, std::vector<std::string>>) return list_text(v, quoted);
        else if constexpr (std::is_same_v<T, GraphAttr>) {
          if (!v.graph) return "graph<>";
          return "graph<" + v.graph->name + ": " + std::to_string(v.graph->num_nodes()) + " nodes, " +
                 hash_hex(structural_hash(*v.graph)) + ">";
        } else {
          // A tensor attribute: its type, and its values when small (they shape the computation).
          std::string out = "tensor<" + to_string(v.type) + ">";
          if (v.data && v.data->size() <= 64) {
            out += '{';
            for (size_t i = 0; i < v.data->size(); ++i) {
              char b[4];
              std::snprintf(b, sizeof b, "%02x", (*v.data)[i]);
              out += b;
            }
            out += '}';
          }
          return out;
        }
      },
      a);
}

int64_t attr_int(const Attributes& a, const std::string& name, int64_t dflt) {
  auto it = a.find(name);
  if (it == a.end()) return dflt;
  if (auto p = std::get_if<int64_t>(&it->second)) return *p;
  if (auto p = std::get_if<double>(&it->second)) return static_cast<int64_t>(*p);
  return dflt;
}

double attr_float(const Attributes& a, const std::string& name, double dflt) {
  auto it = a.find(name);
  if (it == a.end()) return dflt;
  if (auto p = std::get_if<double>(&it->second)) return *p;
  if (auto p = std::get_if<int64_t>(&it->second)) return static_cast<double>(*p);
  return dflt;
}

std::string attr_string(const Attributes& a, const std::string& name, const std::string& dflt) {
  auto it = a.find(name);
  if (it == a.end()) return dflt;
  if (auto p = std::get_if<std::string>(&it->second)) return *p;
  return dflt;
}

std::vector<int64_t> attr_ints(const Attributes& a, const std::string& name, const std::vector<int64_t>& dflt) {
  auto it = a.find(name);
  if (it == a.end()) return dflt;
  if (auto p = std::get_if<std::vector<int64_t>>(&it->second)) return *p;
  if (auto p = std::get_if<std::vector<double>>(&it->second); p && p->empty()) return {};
  return dflt;
}

}  // namespace tessera
