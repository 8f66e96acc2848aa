// NCHW -> NHWC layout conversion with boundary transposes (see convert_layout.h).
#include "emit/convert_layout.h"

#include <map>

#include "emit/graph_edit.h"
#include "ir/op_registry.h"

namespace tessera {
namespace {

const std::vector<int64_t> kToNhwc{0, 2, 3, 1};   // NCHW -> NHWC, and OIHW -> OHWI
const std::vector<int64_t> kToNchw{0, 3, 1, 2};

bool is_conv_2d(const Graph& g, const Node& n) {
  return n.op == "Conv" && n.domain.empty() && n.inputs.size() >= 2 && g.value(n.inputs[0]).type.rank() == 4;
}

class LayoutConverter {
 public:
  LayoutConverter(const Graph& in, std::string domain) : in_(in), domain_(std::move(domain)) {
    out_.name = in.name;
    out_.source = in.source;
    out_.opset = in.opset;
    for (ValueId v : in.inputs) {
      ValueId id = out_.add_value(in.value(v));
      out_.inputs.push_back(id);
      nchw_[v] = id;
    }
  }

  Graph run() {
    for (const Node& n : in_.nodes) convert(n);
    for (ValueId v : in_.outputs) out_.outputs.push_back(nchw(v));
    return std::move(out_);
  }

 private:
  ValueId transpose(ValueId src, const std::vector<int64_t>& perm, const std::string& name) {
    const Value& s = out_.value(src);
    ValueId y = out_.add_value(Value{name, TensorType{s.type.dtype, emit_detail::transpose_shape(s.type.shape, perm)}});
    Node t;
    t.name = "transpose_" + name;   // value names are unique; node names may equal them
    t.op = "Transpose";
    t.attrs["perm"] = perm;
    t.inputs = {src};
    t.outputs = {y};
    out_.add_node(std::move(t));
    return y;
  }
  // The value in NCHW (the original layout), materialised from its NHWC form if need be.
  ValueId nchw(ValueId v) {
    if (v == kNoValue) return kNoValue;
    if (auto it = nchw_.find(v); it != nchw_.end()) return it->second;
    if (in_.value(v).is_constant()) return nchw_[v] = out_.add_value(in_.value(v));
    return nchw_[v] = transpose(nhwc_.at(v), kToNchw, in_.value(v).name);
  }
  ValueId nhwc(ValueId v, const char* suffix = "_nhwc") {
    if (auto it = nhwc_.find(v); it != nhwc_.end()) return it->second;
    return nhwc_[v] = transpose(nchw(v), kToNhwc, in_.value(v).name + suffix);
  }
  bool has_nhwc(ValueId v) const { return nhwc_.count(v) != 0; }
  // A new output value of `v`'s name, in NHWC (nhwc = true) or as is.
  ValueId output(ValueId v, bool to_nhwc) {
    Value val = in_.value(v);
    val.producer = kNoNode;
    if (to_nhwc) {
      val.name += "_nhwc";
      val.type.shape = emit_detail::transpose_shape(val.type.shape, kToNhwc);
    }
    ValueId id = out_.add_value(std::move(val));
    (to_nhwc ? nhwc_ : nchw_)[v] = id;
    return id;
  }

  void convert(const Node& n) {
    Node node = n;
    bool to_nhwc = false;
    if (is_conv_2d(in_, n)) {
      node.domain = domain_;
      node.attrs["data_layout"] = std::string("NHWC");
      node.attrs["kernel_layout"] = std::string("OHWI");
      node.inputs[0] = nhwc(n.inputs[0]);
      node.inputs[1] = nhwc(n.inputs[1], "_ohwi");
      for (size_t i = 2; i < n.inputs.size(); ++i) node.inputs[i] = nchw(n.inputs[i]);
      to_nhwc = true;
    } else if (follows_layout(n)) {
      for (ValueId& v : node.inputs) v = nhwc(v);
      to_nhwc = true;
    } else {
      for (ValueId& v : node.inputs) v = nchw(v);
    }
    for (ValueId& v : node.outputs) v = output(v, to_nhwc);
    out_.add_node(std::move(node));
  }
  // Unary elementwise on an NHWC value, or a same-shape 4-D binary op with an NHWC operand.
  bool follows_layout(const Node& n) const {
    if (!n.domain.empty() || n.outputs.size() != 1) return false;
    const Shape& out = in_.value(n.outputs[0]).type.shape;
    OpKind kind = op_kind(n.op);
    if (kind == OpKind::Elementwise && n.inputs.size() == 1) return has_nhwc(n.inputs[0]) && out.size() == 4;
    if (kind != OpKind::Broadcast || n.inputs.size() != 2 || out.size() != 4) return false;
    bool any = false;
    for (ValueId v : n.inputs) {
      if (v == kNoValue || in_.value(v).type.shape != out) return false;
      any = any || has_nhwc(v);
    }
    return any;
  }

  const Graph& in_;
  std::string domain_;
  Graph out_;
  std::map<ValueId, ValueId> nchw_, nhwc_;   // input value -> its form in out_
};

}  // namespace

Graph convert_layout_nhwc(const Graph& fn, const std::string& domain) {
  bool any = false;
  for (const Node& n : fn.nodes) any = any || is_conv_2d(fn, n);
  if (!any) return fn;
  return LayoutConverter(fn, domain).run();
}

Module convert_layout(const Module& module, const std::string& backend) {
  Module out = module;
  for (const std::string& symbol : module.functions_of(backend)) {
    Function& fn = out.functions.at(symbol);
    fn.body = convert_layout_nhwc(fn.body, backend);
    fn.lowered.reset();   // stale once the body changed
  }
  return out;
}

}  // namespace tessera
