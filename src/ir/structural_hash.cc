// Function identity by canonical serialisation: a Graph is written as a byte stream in which
// values are numbered by first appearance (graph inputs first, then as nodes read them) and names
// never appear. Equality compares the streams; the hash is FNV-1a 64 over the stream, stable
// across runs, machines and compilers.
#include "ir/structural_hash.h"

#include <cstdio>
#include <cstring>
#include <type_traits>
#include <unordered_map>

#include "ir/boundary_layout.h"

namespace tessera {
namespace {

class Canonical {
 public:
  explicit Canonical(const Graph& g) : g_(g) {
    put_u64(g.inputs.size());
    for (ValueId v : g.inputs) put_value(v);
    for (const Node& n : g.nodes) put_node(n);
    put_u64(g.outputs.size());
    for (ValueId v : g.outputs) put_ref(v);
  }
  const std::string& bytes() const { return out_; }

 private:
  void put_u64(uint64_t x) { out_.append(reinterpret_cast<const char*>(&x), sizeof x); }
  void put_str(std::string_view s) {
    put_u64(s.size());
    out_.append(s);
  }
  void put_type(const TensorType& t) {
    put_u64(static_cast<uint64_t>(t.dtype));
    put_u64(t.shape.size());
    for (int64_t d : t.shape) put_u64(static_cast<uint64_t>(d));
  }
  void put_data(const TensorData& d) {
    if (!d) return put_u64(~0ull);
    put_str(std::string_view(reinterpret_cast<const char*>(d->data()), d->size()));
  }
  // First sight of a value: its kind and type, and a small constant's data.
  void put_value(ValueId v) {
    ids_.emplace(v, ids_.size());
    const Value& val = g_.value(v);
    // A plain-only 4-D activation crosses boundaries in another layout than a feature map of its
    // type, so it is another function; every other value writes the bytes it always did.
    const bool plain_only = val.plain_only && layout_sensitive(val.type);
    put_u64(static_cast<uint64_t>(val.kind) | (plain_only ? uint64_t{1} << 32 : 0) | (val.range ? uint64_t{1} << 33 : 0));
    put_type(val.type);
    if (val.range) {   // a calibrated range: another int8 function (unset values write what they always did)
      out_.append(reinterpret_cast<const char*>(&val.range->first), sizeof(float));
      out_.append(reinterpret_cast<const char*>(&val.range->second), sizeof(float));
    }
    if (!val.int8_bias_shift.empty()) {   // an int8 bias correction: another int8 function
      put_u64(0x62696173ull ^ val.int8_bias_shift.size());
      out_.append(reinterpret_cast<const char*>(val.int8_bias_shift.data()), val.int8_bias_shift.size() * sizeof(float));
    }
    if (val.is_constant() && !val.is_weight()) put_data(val.data);
  }
  void put_ref(ValueId v) {
    if (v == kNoValue) return put_u64(~0ull);
    auto it = ids_.find(v);
    if (it != ids_.end()) return put_u64(it->second);
    put_u64(~1ull);  // a value first seen here (a constant)
    put_value(v);
  }
  void put_attr(const Attribute& a) {
    put_u64(a.index());
    if (const Tensor* t = std::get_if<Tensor>(&a)) {
      put_type(t->type);
      put_data(t->data);
    } else if (const GraphAttr* sg = std::get_if<GraphAttr>(&a)) {
      put_str(sg->graph ? Canonical(*sg->graph).bytes() : std::string());
    } else {
      put_str(attribute_to_string(a));
    }
  }
  void put_node(const Node& n) {
    put_str(n.op);
    put_str(n.domain);
    put_u64(n.attrs.size());
    for (const auto& [name, a] : n.attrs) {
      put_str(name);
      put_attr(a);
    }
    put_u64(n.inputs.size());
    for (ValueId v : n.inputs) put_ref(v);
    put_u64(n.outputs.size());
    for (ValueId v : n.outputs) put_value(v);
  }

  const Graph& g_;
  std::unordered_map<ValueId, uint64_t> ids_;
  std::string out_;
};

}  // namespace

uint64_t fnv1a64(std::string_view bytes, uint64_t h) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string canonical_form(const Graph& fn) { return Canonical(fn).bytes(); }

uint64_t structural_hash(const Graph& fn) { return fnv1a64(canonical_form(fn)); }

bool structurally_equal(const Graph& a, const Graph& b) { return canonical_form(a) == canonical_form(b); }

std::string hash_hex(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace tessera
