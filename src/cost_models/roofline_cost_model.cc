// The roofline cost model. See src/cost_models/roofline_cost_model.h for the formula.
#include "cost_models/roofline_cost_model.h"

#include <algorithm>

#include "tessera/error.h"
#include "ir/op_registry.h"

namespace tessera {
namespace {

// Memory traffic of one boundary value. Every backend here computes f16/bf16 in f32 (ref per node,
// the others per function: half_widening.h), so a half value also costs its conversion: read 2
// bytes and write the 4-byte copy, then the kernel reads 4 (an output: written 4, read 4, stored 2).
double boundary_bytes(const TensorType& t) {
  const double bytes = static_cast<double>(t.bytes());
  return t.dtype == DType::f16 || t.dtype == DType::bf16 ? 5.0 * bytes : bytes;
}

bool eight_bit(DType t) { return t == DType::u8 || t == DType::i8; }

// `v` is a DequantizeLinear's result, inside fn, of an 8-bit tensor.
bool dequantized_int8(const Graph& fn, const std::vector<int>& producer, ValueId v) {
  if (v == kNoValue || producer[static_cast<size_t>(v)] < 0) return false;
  const Node& dq = fn.node(producer[static_cast<size_t>(v)]);
  return dq.op == "DequantizeLinear" && !dq.inputs.empty() && eight_bit(fn.value(dq.inputs[0]).type.dtype);
}

// Node n computes on 8-bit integers (roofline_cost_model.h, "int8 work").
bool int8_work(const Graph& fn, const std::vector<int>& producer, const std::vector<std::vector<NodeId>>& consumers,
               const Node& n) {
  if (n.op == "QLinearConv" || n.op == "QLinearMatMul" || n.op == "ConvInteger" || n.op == "MatMulInteger") return true;
  if (n.op != "Conv" && n.op != "MatMul" && n.op != "Gemm") return false;
  if (n.inputs.size() < 2 || !dequantized_int8(fn, producer, n.inputs[0]) || !dequantized_int8(fn, producer, n.inputs[1]))
    return false;
  ValueId out = n.outputs[0];
  for (int hops = 0; hops < 2; ++hops) {   // [Relu | Clip] then QuantizeLinear, each the only reader
    const auto& readers = consumers[static_cast<size_t>(out)];
    if (readers.size() != 1 || fn.is_output(out)) return false;
    const Node& next = fn.node(readers[0]);
    if (next.op == "QuantizeLinear") return true;
    if (hops > 0 || (next.op != "Relu" && next.op != "Clip")) return false;
    out = next.outputs[0];
  }
  return false;
}

}  // namespace

std::vector<NodeWork> roofline_work(const Graph& fn) {
  std::vector<char> charged(fn.values.size(), 0);   // boundary value already paid for
  std::vector<char> is_output(fn.values.size(), 0);
  for (ValueId v : fn.outputs) is_output[static_cast<size_t>(v)] = 1;

  std::vector<int> producer(fn.values.size(), -1);
  for (size_t i = 0; i < fn.nodes.size(); ++i)
    for (ValueId v : fn.nodes[i].outputs)
      if (v != kNoValue) producer[static_cast<size_t>(v)] = static_cast<int>(i);
  const std::vector<std::vector<NodeId>> consumers = fn.consumers();

  std::vector<NodeWork> work;
  work.reserve(fn.nodes.size());
  for (const Node& n : fn.nodes) {
    double bytes = 0.0;
    for (ValueId v : n.inputs) {
      if (v == kNoValue) continue;
      const Value& val = fn.value(v);
      if (val.kind == ValueKind::Intermediate || charged[static_cast<size_t>(v)]) continue;
      charged[static_cast<size_t>(v)] = 1;
      bytes += boundary_bytes(val.type);
    }
    for (ValueId v : n.outputs) {
      if (v != kNoValue && is_output[static_cast<size_t>(v)]) bytes += boundary_bytes(fn.value(v).type);
    }
    work.push_back(NodeWork{node_flops(fn, n), bytes, int8_work(fn, producer, consumers, n)});
  }
  return work;
}

RooflineBreakdown roofline(const std::vector<NodeWork>& work, const DeviceProfile& p, const Efficiency& eff) {
  const double flops_per_s = p.peak_gflops * 1e9 * eff.compute;
  const double bytes_per_s = p.bandwidth_gbs * 1e9 * eff.memory;
  RooflineBreakdown r;
  double sum_max = 0.0;
  const double int8_speedup = eff.int8_speedup.value_or(1.0);
  for (const NodeWork& w : work) {
    double c = w.flops / (w.int8 ? flops_per_s * int8_speedup : flops_per_s);
    double m = w.bytes / bytes_per_s;
    r.flops += w.flops;
    r.bytes += w.bytes;
    r.compute_s += c;
    r.memory_s += m;
    sum_max += std::max(c, m);
  }
  r.seconds = sum_max + p.call_overhead_s(eff);
  return r;
}

RooflineBreakdown roofline(const Graph& fn, const DeviceProfile& p, const Efficiency& eff) {
  return roofline(roofline_work(fn), p, eff);
}

namespace {
std::vector<DeviceProfile> checked(std::vector<DeviceProfile> profiles) {
  for (size_t i = 0; i < profiles.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (profiles[i].device == profiles[j].device) {
        throw UserError::option("cost", "roofline", "profiles '" + profiles[j].name + "' and '" + profiles[i].name +
                                                  "' both describe device '" + profiles[i].device + "'");
      }
    }
  }
  return profiles;
}
}  // namespace

RooflineCostModel::RooflineCostModel(std::vector<DeviceProfile> profiles)
    : profiles_(checked(std::move(profiles))), transfers_(profiles_) {
  for (const DeviceProfile& p : profiles_) fingerprints_.push_back(p.fingerprint());
}

const DeviceProfile* RooflineCostModel::profile_for(std::string_view device) const {
  return transfers_.find(device);
}

std::string RooflineCostModel::device_fingerprint(std::string_view device) const {
  for (size_t i = 0; i < profiles_.size(); ++i) {
    if (profiles_[i].device == device) return fingerprints_[i];
  }
  return std::string(device);
}

Cost RooflineCostModel::estimate_impl(const CostRequest& r) const {
  const DeviceProfile* p = profile_for(r.device);
  if (!p) return Cost::invalid("roofline: no device profile for device '" + r.device + "'");
  std::vector<NodeWork> work = roofline_work(*r.function);
  // A precision variant named <backend>_int8 (onednn_int8) runs its convolutions and matmuls as
  // u8 x s8 dot products: AVX512-VNNI's vpdpbusd does 64 int8 multiply-adds per instruction
  // against 16 f32 FMAs, so their arithmetic is priced at 4x the f32 rate (the efficiency factor,
  // at most 1 of the f32 peak, cannot say it). Its other nodes run in f32 as priced.
  // A profile without factors of its own for the variant (one fitted before it existed) prices
  // it with its base backend's, not the default's.
  const bool int8 = r.backend.size() > 5 && r.backend.ends_with("_int8");
  if (int8)
    for (size_t i = 0; i < work.size(); ++i) {
      const std::string& op = r.function->nodes[i].op;
      if (op == "Conv" || op == "MatMul" || op == "Gemm") work[i].flops /= 4.0;
    }
  const std::string base = int8 && !p->efficiency.count(r.backend) ? r.backend.substr(0, r.backend.size() - 5) : r.backend;
  return Cost::value(roofline(work, *p, p->efficiency_for(base)).seconds);
}

Cost RooflineCostModel::transfer_impl(size_t bytes, std::string_view from, std::string_view to) const {
  return transfers_.cost(bytes, from, to);
}

void RooflineCostModel::check_backends_impl(const std::vector<BackendRef>& backends) const {
  for (const BackendRef& b : backends) {
    if (!profile_for(b.device)) {
      throw UserError::option("cost", "roofline", "no device profile for device '" + b.device + "' (backend '" +
                                                b.name + "'); name one, e.g. roofline:a100");
    }
  }
}

}  // namespace tessera
