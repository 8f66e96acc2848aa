// CostModel: one interface for every way tessera prices a candidate function on a backend.
//
// Terms. A CostRequest is one question: "what does this candidate function cost on backend B
// (running on device D)?". The function is the candidate extracted as a standalone Graph (nodes in
// model order, weights as constants), identified by its structural hash; structurally equal
// candidates therefore share one answer, in memory (estimator.h) and on disk (cost_database.h).
//
//   candidate {Conv_3, Relu_4} on "onednn"/"cpu"
//     -> CostRequest{fn, hash=9f3a.., backend="onednn", device="cpu", label="Conv+Relu"}
//     -> model.estimate(req) = Cost::value(1.2e-4)
//
// Implementations: "mock" (mock_cost_model.h, the tessera.mock_costs file), "roofline"
// (roofline_cost_model.h, device profiles), "measure" (built outside tessera_cost and
// handed to make_cost_model through CostModelOptions, so tessera_cost does not depend on the
// backends).
//
// Contract for implementations:
//   - estimate_impl is called concurrently from several threads (estimator.h): it must be
//     thread-safe and must not depend on call order (results are identical for every -j).
//   - a backend that cannot build the candidate is Invalid(reason), not an exception; exceptions
//     are for user errors (UserError) and bugs.
//   - fingerprint() changes whenever the answers could change (file contents, profile numbers,
//     model version): it is part of the cost database key, so a stale entry is never reused.
//
// Public non-virtual entry points with protected virtual implementations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/cost.h"
#include "tessera/cost_database.h"
#include "tessera/graph.h"

namespace tessera {

struct BoundaryLayouts;      // src/ir/boundary_layout.h
struct CostModelOptions;     // src/cost_models/cost_model_options.h

struct CostRequest {
  const Graph* function = nullptr;   // non-owning; the candidate as a standalone function
  uint64_t hash = 0;                 // structural_hash(*function)
  std::string backend;               // backend name, e.g. "onednn"
  std::string backend_version;       // part of the database key; "" when the backend has none
  std::string device;                // the backend's device name, e.g. "cpu", "gpu"
  std::string label;                 // for messages: "Conv+Relu"
  // The boundary layouts to price it with; unset: the backend's native ones (what the executor
  // runs a candidate with). Layout conversions (boundary_layout.h) are priced all plain. Callers
  // that set it mix it into `hash`, so the two never share a database entry.
  std::shared_ptr<const BoundaryLayouts> layouts;

  CostRequest() = default;
  CostRequest(const Graph& fn, uint64_t h, std::string backend_name, std::string device_name,
              std::string label_text = {}, std::string version = {})
      : function(&fn), hash(h), backend(std::move(backend_name)), backend_version(std::move(version)),
        device(std::move(device_name)), label(std::move(label_text)) {}
};

// A backend as a cost model needs to know it when checking coverage.
struct BackendRef {
  std::string name;
  std::string device;
};

class CostModel {
 public:
  virtual ~CostModel() = default;

  // The cost of one request. Thread-safe. Checks the request (non-null function).
  Cost estimate(const CostRequest& request) const;
  // The cost plus what the database keeps beside it (spread and sample count of a measurement).
  // The estimator calls this one.
  CostEntry estimate_entry(const CostRequest& request) const;

  // Cost of moving `bytes` produced on device `from` to a consumer on device `to`; zero when
  // from == to. Thread-safe.
  Cost transfer(size_t bytes, std::string_view from, std::string_view to) const;

  // Cost of handing a value of `type` from a function on backend `from` to a function on backend
  // `to` (a boundary, docs/design.md "Crossings"); zero when from == to. Charged by the search once
  // per (value, consuming backend), on top of any device transfer. Thread-safe.
  Cost boundary(const TensorType& type, std::string_view from, std::string_view to) const;

  // Throws UserError when the model cannot price some backend at all, e.g. a backend missing from
  // the mock cost file or a device without a profile. Call once before the search.
  void check_backends(const std::vector<BackendRef>& backends) const { check_backends_impl(backends); }

  // Whether the search should add the price of layout conversions (boundary_layout.h) to
  // crossings between backends whose boundary layouts differ, estimating each conversion as a
  // function with this model: true for the models of real execution (roofline, measure), false
  // for mock, whose boundary prices are exactly its file's (docs/design.md).
  virtual bool prices_layouts() const { return false; }

  // Whether the prices are timings of real runs on this machine ("measure"): then a plan can be
  // priced as it runs, and raced end to end against other plans (the tuning pipeline, tune.h).
  virtual bool measures() const { return false; }
  // Whether a price is a time in seconds (roofline, measure), so that a plan's total predicts its
  // latency; false for mock, whose prices are its file's units.
  virtual bool prices_in_seconds() const { return true; }

  // "mock", "roofline", "measure".
  virtual std::string name() const = 0;
  // Everything that determines the answers, short and stable: e.g. "mock/1/3fa2c9e01b7d6e44".
  virtual std::string fingerprint() const = 0;
  // Identity of the hardware behind `device` for the database key. Default: the device name.
  virtual std::string device_fingerprint(std::string_view device) const { return std::string(device); }

 protected:
  virtual Cost estimate_impl(const CostRequest& request) const = 0;
  // Default: {estimate_impl(request), spread 0, samples 0}. Measuring models override it.
  virtual CostEntry estimate_entry_impl(const CostRequest& request) const;
  // Default: zero on one device, else Unknown (a model without a notion of links).
  virtual Cost transfer_impl(size_t bytes, std::string_view from, std::string_view to) const;
  // Default: zero (the contract's boundary prices are the mock model's; layout conversions are
  // priced as functions, see prices_layouts()).
  virtual Cost boundary_impl(const TensorType& type, std::string_view from, std::string_view to) const;
  virtual void check_backends_impl(const std::vector<BackendRef>& backends) const {}
};

// Parses a --cost spec: "mock:FILE", "roofline", "roofline:PROFILE[,PROFILE...]", "measure[:ARG]".
// PROFILE is a path to a device profile or a name in data/devices (see device_profile.h); the cpu
// is priced by the named cpu profile, else by this machine's own (host_profile.h).
// Throws UserError("--cost: ...") for an unknown model and whatever the loaders throw.
std::unique_ptr<CostModel> make_cost_model(std::string_view spec);
// The same with the options of cost_model_options.h (the "measure" model's maker, the host profile).
std::unique_ptr<CostModel> make_cost_model(std::string_view spec, const CostModelOptions& options);

}  // namespace tessera
