// The roofline cost model: time from FLOPs, bytes and a device profile, no measurement.
//
// Terms. For a candidate function F on backend b, device profile P (device_profile.h), efficiency
// e = P.efficiency_for(b):
//   compute_s(n) = node_flops(n) / (P.peak_gflops * 1e9 * e.compute)
//   memory_s(n)  = external_bytes(n) / (P.bandwidth_gbs * 1e9 * e.memory)
//   time(F)      = sum over nodes n of max(compute_s(n), memory_s(n)) + overhead
// where overhead is e.call_overhead_us when the profile sets one for b, else P.call_overhead_us.
// external_bytes(n) counts only the memory traffic that crosses F's boundary: each input and
// constant (weights) of F is charged once, to its first reader in model order, and each output of
// F once, to its producer. Values produced and consumed inside F are assumed to stay in cache.
// An f16/bf16 boundary value counts 5x its bytes: backends compute half precision in f32, so it
// is also converted (2 bytes read, 4 written and read again; half_convert.h).
//
// Before/after, why per node and why boundary bytes:
//   Conv -> Relu as two functions: 2 calls, Conv writes y, Relu reads y and writes z
//   Conv+Relu as one function:     1 call,  Conv's y never goes to memory
// so fusion pays exactly where it does on real hardware: fewer calls, less traffic. Taking the max
// per node (not over the whole function) keeps a compute-bound Conv from hiding a memory-bound
// neighbour's cost.
//
// int8 work: a node that computes on 8-bit integers (QLinearConv, QLinearMatMul, ConvInteger,
// MatMulInteger, or a Conv/MatMul/Gemm of a QDQ group: source and weight each a DequantizeLinear
// of a u8/s8 tensor inside F, the result [through Relu/Clip] quantized inside F, the form int8
// backends compile into one int8 primitive) has its compute time divided by e.int8_speedup when
// the profile sets one for b (VNNI's vpdpbusd does four 8-bit multiply-adds per 32-bit lane where
// an FMA does one f32: host.json gives onednn 4). Backends without the field price it at f32
// rates, as they compute it (a DequantizeLinear, then an f32 kernel).
//
// Trade-off: no cache-size limit (a huge intermediate is still "in cache"), no overlap between
// calls. Not needed for correctness: any of these numbers; the search only needs costs >= 0.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tessera/cost_model.h"
#include "cost_models/device_profile.h"
#include "cost_models/transfer_cost.h"

namespace tessera {

struct RooflineBreakdown {
  double flops = 0.0;          // total FLOPs
  double bytes = 0.0;          // total boundary bytes
  double compute_s = 0.0;      // sum of per-node compute times
  double memory_s = 0.0;       // sum of per-node memory times
  double seconds = 0.0;        // the cost: sum of per-node maxima + one call overhead
};

// What the roofline needs of one node: its FLOPs and the boundary bytes charged to it. The
// profile-free half of the model, computed once per function (roofline_refit.h refits the
// profile against many functions' work).
struct NodeWork {
  double flops = 0.0;
  double bytes = 0.0;
  bool int8 = false;   // int8 work (above)
};
std::vector<NodeWork> roofline_work(const Graph& fn);

RooflineBreakdown roofline(const std::vector<NodeWork>& work, const DeviceProfile& profile,
                           const Efficiency& eff);
RooflineBreakdown roofline(const Graph& fn, const DeviceProfile& profile, const Efficiency& eff);

class RooflineCostModel final : public CostModel {
 public:
  // One profile per device name; a second profile for the same device is a UserError.
  explicit RooflineCostModel(std::vector<DeviceProfile> profiles);
  std::string name() const override { return "roofline"; }
  bool prices_layouts() const override { return true; }
  std::string fingerprint() const override { return "roofline/1"; }
  // The profile's fingerprint: new numbers, new database keys.
  std::string device_fingerprint(std::string_view device) const override;
  const DeviceProfile* profile_for(std::string_view device) const;

 protected:
  Cost estimate_impl(const CostRequest& request) const override;
  Cost transfer_impl(size_t bytes, std::string_view from, std::string_view to) const override;
  // UserError when a backend's device has no profile.
  void check_backends_impl(const std::vector<BackendRef>& backends) const override;

 private:
  std::vector<DeviceProfile> profiles_;
  std::vector<std::string> fingerprints_;   // of profiles_, computed once (they key every lookup)
  TransferCostTable transfers_;
};

}  // namespace tessera
