// The mock cost model: the `tessera.mock_costs` file of docs/design.md, for tests and reproducing
// Collage's own partition tests.
//
// Terms. Per backend b: per_op (required), decay (default 0.9), overhead (default 0), op (optional
// per-op-type weights). The cost of a candidate function with nodes n_0..n_{k-1} in model order:
//   overhead_b + sum_k w_k * decay_b^k,   w_k = op[n_k.op] if given, else per_op
// With equal weights and no overhead this is Collage's MockEstimator: 5 Relus at per_op 6 cost
// 6 * (1 + 0.9 + 0.81 + 0.729 + 0.6561) = 6 * 4.0951 = 24.5706.
//
// Crossings (docs/design.md, optional): "transfer": {"per_byte": x, "latency": y} prices a value
// crossing devices as latency + bytes * per_byte; absent = 0 (Collage has no transfers).
// "boundaries": {"default": {...}, "pairs": {"A->B": {...}}} prices a value handed from a function
// on backend A to one on backend B != A the same way, from pairs["A->B"] if given, else from
// default; absent entries and fields are 0.
//
// The loader rejects what it does not understand: an unknown field, a wrong type, a negative
// weight or a decay outside (0, 1] is a UserError naming the file and the JSON path
// ("costs.json: /backends/byoc/decay: expected a number").
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/cost_model.h"

namespace tessera {

struct MockBackendCosts {
  double per_op = 0.0;
  double decay = 0.9;
  double overhead = 0.0;
  std::map<std::string, double> op;   // op type -> weight
};

// latency + bytes * per_byte: one crossing's price.
struct MockCrossing {
  double latency = 0.0;
  double per_byte = 0.0;
  double price(size_t bytes) const { return latency + static_cast<double>(bytes) * per_byte; }
};

struct MockCosts {
  std::string file;                                  // for messages
  std::map<std::string, MockBackendCosts> backends;
  double transfer_per_byte = 0.0;
  double transfer_latency = 0.0;
  MockCrossing boundary_default;                     // "boundaries"/"default"
  std::map<std::string, MockCrossing> boundary_pairs;   // "A->B" -> price
};

MockCosts parse_mock_costs(std::string_view json_text, const std::string& file);
MockCosts load_mock_costs(const std::filesystem::path& path);

// Throws UserError("FILE: backends: no costs for backend 'x'") for the first backend (in list
// order) that the file does not price.
void check_mock_backends(const MockCosts& costs, const std::vector<std::string>& backends);

// The formula above for one backend.
double mock_cost(const MockBackendCosts& costs, const Graph& fn);

class MockCostModel final : public CostModel {
 public:
  explicit MockCostModel(MockCosts costs);
  std::string name() const override { return "mock"; }
  // "mock/1/<hash of the parsed costs>": stable under reformatting of the file.
  std::string fingerprint() const override { return fingerprint_; }
  const MockCosts& costs() const { return costs_; }

 protected:
  // A backend missing from the file is Invalid (check_backends reports it as a usage error first).
  Cost estimate_impl(const CostRequest& request) const override;
  Cost transfer_impl(size_t bytes, std::string_view from, std::string_view to) const override;
  Cost boundary_impl(const TensorType& type, std::string_view from, std::string_view to) const override;
  void check_backends_impl(const std::vector<BackendRef>& backends) const override;

 private:
  MockCosts costs_;
  std::string fingerprint_;
};

}  // namespace tessera
