// The roofline model on hand-built Conv/MatMul functions, device profiles, transfer costs.
#include <catch2/catch.hpp>

#include <filesystem>

#include "cost_models/graph_builder.h"
#include "tessera/error.h"
#include "ir/op_registry.h"
#include "cost_models/roofline_cost_model.h"
#include "cost_models/transfer_cost.h"

using namespace tessera;
using tessera::test::GraphBuilder;

namespace {
// 1 GFLOP/s, 1 GB/s, 10 us per call: one FLOP or one byte is one nanosecond.
DeviceProfile unit_profile(std::string name = "unit", std::string device = "cpu") {
  DeviceProfile p;
  p.name = std::move(name);
  p.device = std::move(device);
  p.source = "test";
  p.peak_gflops = 1.0;
  p.bandwidth_gbs = 1.0;
  p.call_overhead_us = 10.0;
  p.efficiency = {{"default", {1.0, 1.0}}, {"slow", {0.5, 0.25}}};
  return p;
}

Attributes conv_attrs() { return {{"kernel_shape", std::vector<int64_t>{3, 3}}}; }

// x[1,3,32,32] -> Conv(w[16,3,3,3]) -> Relu -> [1,16,30,30]
Graph conv_relu() {
  GraphBuilder b;
  ValueId x = b.input("x", {1, 3, 32, 32});
  ValueId w = b.constant("w", {16, 3, 3, 3});
  ValueId c = b.op("Conv", "conv", {x, w}, {1, 16, 30, 30}, conv_attrs());
  b.output(b.op("Relu", "relu", {c}, {1, 16, 30, 30}));
  return b.g;
}
Graph conv_only() {
  GraphBuilder b;
  ValueId x = b.input("x", {1, 3, 32, 32});
  ValueId w = b.constant("w", {16, 3, 3, 3});
  b.output(b.op("Conv", "conv", {x, w}, {1, 16, 30, 30}, conv_attrs()));
  return b.g;
}
Graph relu_only() {
  GraphBuilder b;
  b.output(b.op("Relu", "relu", {b.input("c", {1, 16, 30, 30})}, {1, 16, 30, 30}));
  return b.g;
}
}  // namespace

TEST_CASE("roofline: a fused Conv+Relu pays one call and keeps its intermediate in cache") {
  DeviceProfile p = unit_profile();
  Graph fused = conv_relu();
  const double conv_flops = 2.0 * 16 * 30 * 30 * 3 * 9;   // 777600
  REQUIRE(node_flops(fused, fused.nodes[0]) == conv_flops);
  const double relu_flops = node_flops(fused, fused.nodes[1]);
  const double x_bytes = 3 * 32 * 32 * 4, w_bytes = 16 * 27 * 4, y_bytes = 16 * 900 * 4;

  RooflineBreakdown r = roofline(fused, p, p.efficiency_for("any"));
  REQUIRE(r.flops == conv_flops + relu_flops);
  REQUIRE(r.bytes == x_bytes + w_bytes + y_bytes);   // the Conv's output never goes to memory
  double expect = std::max(conv_flops, x_bytes + w_bytes) * 1e-9 + std::max(relu_flops, y_bytes) * 1e-9 + 10e-6;
  REQUIRE(r.seconds == Approx(expect).epsilon(1e-12));

  double split = roofline(conv_only(), p, p.efficiency_for("any")).seconds +
                 roofline(relu_only(), p, p.efficiency_for("any")).seconds;
  REQUIRE(split == Approx(std::max(conv_flops, x_bytes + w_bytes + y_bytes) * 1e-9 +
                          std::max(relu_flops, 2 * y_bytes) * 1e-9 + 20e-6));
  REQUIRE(r.seconds < split);
}

TEST_CASE("roofline: MatMul compute- and memory-bound, efficiency per backend") {
  GraphBuilder b;
  ValueId a = b.input("a", {64, 128});
  ValueId w = b.constant("w", {128, 256});
  b.output(b.op("MatMul", "mm", {a, w}, {64, 256}));
  const double flops = 2.0 * 64 * 256 * 128;
  const double bytes = (64 * 128 + 128 * 256 + 64 * 256) * 4.0;
  REQUIRE(node_flops(b.g, b.g.nodes[0]) == flops);

  DeviceProfile p = unit_profile();
  RooflineCostModel model({p});
  uint64_t h = structural_hash(b.g);
  Cost fast = model.estimate(CostRequest(b.g, h, "blas", "cpu"));
  REQUIRE(fast.seconds() == Approx(flops * 1e-9 + 10e-6));   // compute-bound at 1 GFLOP/s
  Cost slow = model.estimate(CostRequest(b.g, h, "slow", "cpu"));
  REQUIRE(slow.seconds() == Approx(flops * 2e-9 + 10e-6));   // half the compute efficiency

  p.peak_gflops = 1e6;   // now memory-bound
  RooflineCostModel fast_chip({p});
  REQUIRE(fast_chip.estimate(CostRequest(b.g, h, "slow", "cpu")).seconds() == Approx(bytes * 4e-9 + 10e-6));
  REQUIRE(fast_chip.device_fingerprint("cpu") != model.device_fingerprint("cpu"));

  REQUIRE(model.estimate(CostRequest(b.g, h, "cuda", "gpu")).is_invalid());
  REQUIRE_THROWS_WITH(model.check_backends({{"blas", "cpu"}, {"cuda", "gpu"}}),
                      Catch::Contains("no device profile for device 'gpu' (backend 'cuda')"));
  REQUIRE_THROWS_AS(RooflineCostModel({unit_profile("a"), unit_profile("b")}), UserError);
}

TEST_CASE("transfer: zero on one device, link bandwidth + latency across, staged through the host") {
  DeviceProfile host = unit_profile("host", "cpu");
  DeviceProfile gpu = unit_profile("g", "gpu");
  gpu.link = LinkProfile{10.0, 5.0};
  DeviceProfile npu = unit_profile("n", "npu");
  npu.link = LinkProfile{1.0, 1.0};
  REQUIRE(transfer_cost(1000000, host, host) == Cost::zero());
  REQUIRE(transfer_cost(1000000, host, gpu).seconds() == Approx(1e6 / 10e9 + 5e-6));
  REQUIRE(transfer_cost(1000000, gpu, host).seconds() == Approx(1e6 / 10e9 + 5e-6));
  REQUIRE(transfer_cost(1000000, gpu, npu).seconds() == Approx(1e6 / 10e9 + 5e-6 + 1e6 / 1e9 + 1e-6));

  RooflineCostModel model({host, gpu});
  REQUIRE(model.transfer(4000, "gpu", "gpu") == Cost::zero());
  REQUIRE(model.transfer(4000, "cpu", "gpu").seconds() == Approx(4000 / 10e9 + 5e-6));
  REQUIRE(model.transfer(4000, "cpu", "tpu").is_unknown());
}

// A QDQ group: DQ(x u8) and DQ(w s8) -> Conv [-> Relu] -> QuantizeLinear (quantized = false: the
// Conv's result is not quantized, so no int8 backend runs it in int8).
Graph qdq_conv(bool quantized) {
  GraphBuilder b;
  ValueId xq = b.input("xq", {1, 3, 32, 32}, DType::u8);
  ValueId wq = b.constant<int8_t>("wq", DType::i8, {16, 3, 3, 3}, std::vector<int8_t>(16 * 27, 1));
  ValueId s = b.scalar("s", 0.1f);
  ValueId x = b.op("DequantizeLinear", "x", {xq, s}, {1, 3, 32, 32});
  ValueId w = b.op("DequantizeLinear", "w", {wq, s}, {16, 3, 3, 3});
  ValueId c = b.op("Conv", "conv", {x, w}, {1, 16, 30, 30}, conv_attrs());
  ValueId r = b.op("Relu", "relu", {c}, {1, 16, 30, 30});
  if (!quantized) {
    b.output(r);
    return b.g;
  }
  ValueId y = b.op("QuantizeLinear", "y", {r, s}, {1, 16, 30, 30});
  b.g.value(y).type.dtype = DType::u8;
  b.output(y);
  return b.g;
}

TEST_CASE("roofline: int8 work at the backend's int8 rate, everything else at f32's") {
  DeviceProfile p = unit_profile();
  p.peak_gflops = 1e-3;   // compute-bound everywhere: one FLOP is a microsecond
  p.efficiency["int8"] = {1.0, 1.0, std::nullopt, 4.0};
  const Graph group = qdq_conv(true);
  const std::vector<NodeWork> work = roofline_work(group);
  REQUIRE(work.size() == 5);
  for (size_t i = 0; i < work.size(); ++i) CHECK(work[i].int8 == (group.nodes[i].op == "Conv"));
  const double conv = node_flops(group, group.nodes[2]);
  const double f32 = roofline(group, p, p.efficiency_for("f32")).seconds;
  const double int8 = roofline(group, p, p.efficiency_for("int8")).seconds;
  CHECK(f32 - int8 == Approx(conv * 1e-6 * 0.75).epsilon(1e-9));   // the Conv at a quarter of its f32 time

  // Not int8 work: the Conv's result is not quantized, or its source is not dequantized int8.
  for (const NodeWork& w : roofline_work(qdq_conv(false))) CHECK_FALSE(w.int8);
  for (const NodeWork& w : roofline_work(conv_relu())) CHECK_FALSE(w.int8);

  // The field round-trips and is refused out of range.
  const DeviceProfile back = parse_device_profile(device_profile_to_json(p), "p.json");
  CHECK(back.efficiency_for("int8").int8_speedup == 4.0);
  CHECK_FALSE(back.efficiency_for("default").int8_speedup.has_value());
  std::string text = device_profile_to_json(p);
  text.replace(text.find("\"int8_speedup\": 4.0"), 19, "\"int8_speedup\": 0");
  CHECK_THROWS_WITH(parse_device_profile(text, "p.json"), "p.json: /efficiency/int8/int8_speedup: must be in (0, 64], got 0");
  // host.json prices onednn's int8 at VNNI's rate.
  CHECK(load_device_profile(find_data_file("devices/host.json")).efficiency_for("onednn").int8_speedup == 4.0);
}

TEST_CASE("device profiles: bundled ones load, round trip, errors name file and path") {
  namespace fs = std::filesystem;
  int n = 0;
  for (const auto& e : fs::directory_iterator(fs::path(TESSERA_SOURCE_DIR) / "data" / "devices")) {
    if (e.path().extension() != ".json") continue;
    DeviceProfile p = load_device_profile(e.path());
    REQUIRE_FALSE(p.source.empty());
    REQUIRE(parse_device_profile(device_profile_to_json(p), "x").fingerprint() == p.fingerprint());
    ++n;
  }
  REQUIRE(n >= 4);
  DeviceProfile a100 = resolve_device_profile("a100");
  REQUIRE(a100.device == "gpu");
  REQUIRE(a100.link.has_value());
  REQUIRE(load_device_profile(find_data_file("devices/host.json")).device == "cpu");
  REQUIRE_THROWS_WITH(resolve_device_profile("no_such_chip"), Catch::Contains("devices/no_such_chip.json"));

  std::string good = device_profile_to_json(unit_profile());
  auto error_of = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    try {
      parse_device_profile(text, "p.json");
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  REQUIRE(error_of("\"peak_gflops\": 1.0", "\"peak_gflops\": 0") == "p.json: /peak_gflops: must be in (0, inf), got 0");
  REQUIRE(error_of("\"memory\": 0.25", "\"memory\": 2") == "p.json: /efficiency/slow/memory: must be in (0, 1], got 2");
  REQUIRE(error_of("\"default\"", "\"fallback\"") == "p.json: /efficiency/default: missing field");
  REQUIRE(error_of("\"source\": \"test\"", "\"source\": 3") == "p.json: /source: expected a string, got number");
  REQUIRE(error_of("\"name\"", "\"label\"") == "p.json: /label: unknown field");
}
