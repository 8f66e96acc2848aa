// CostModel's non-virtual entry points and the --cost spec factory. See cost_model.h.
#include "tessera/cost_model.h"

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "cost_models/cost_model_options.h"
#include "cost_models/device_profile.h"
#include "tessera/error.h"
#include "cost_models/mock_cost_model.h"
#include "cost_models/roofline_cost_model.h"

namespace tessera {

Cost CostModel::estimate(const CostRequest& request) const {
  TESSERA_CHECK(request.function != nullptr, "CostRequest without a function");
  return estimate_impl(request);
}

CostEntry CostModel::estimate_entry(const CostRequest& request) const {
  TESSERA_CHECK(request.function != nullptr, "CostRequest without a function");
  return estimate_entry_impl(request);
}

CostEntry CostModel::estimate_entry_impl(const CostRequest& request) const {
  return CostEntry{estimate_impl(request), 0.0, 0};
}

Cost CostModel::transfer(size_t bytes, std::string_view from, std::string_view to) const {
  if (from == to) return Cost::zero();
  return transfer_impl(bytes, from, to);
}

Cost CostModel::transfer_impl(size_t, std::string_view from, std::string_view to) const {
  return from == to ? Cost::zero() : Cost::unknown();
}

Cost CostModel::boundary(const TensorType& type, std::string_view from, std::string_view to) const {
  if (from == to) return Cost::zero();
  return boundary_impl(type, from, to);
}

Cost CostModel::boundary_impl(const TensorType&, std::string_view, std::string_view) const {
  return Cost::zero();
}

namespace {
std::vector<std::string> split_commas(std::string_view s) {
  std::vector<std::string> out;
  std::stringstream ss{std::string(s)};
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::unique_ptr<CostModel> make_roofline(std::string_view arg, const HostProfileOptions& host) {
  std::vector<DeviceProfile> profiles;
  for (const std::string& name : split_commas(arg)) {
    profiles.push_back(resolve_device_profile(name));
    // Asked for by name, so used; but a cpu profile from elsewhere says so, once.
    if (std::string w = foreign_profile_warning(profiles.back(), host.threads); !w.empty()) {
      if (host.note) host.note(w);
      else std::fprintf(stderr, "tessera: %s\n", w.c_str());
    }
  }
  // This machine's profile stands in for "cpu" unless a named profile already does.
  bool has_cpu = false;
  for (const DeviceProfile& p : profiles) has_cpu = has_cpu || p.device == "cpu";
  // Without a host profile, a model with no cpu backend still works; check_backends reports it.
  if (!has_cpu) {
    try {
      profiles.push_back(fit_host_profile(host));
    } catch (const UserError&) {
      if (profiles.empty()) throw;
    }
  }
  return std::make_unique<RooflineCostModel>(std::move(profiles));
}
}  // namespace

std::unique_ptr<CostModel> make_cost_model(std::string_view spec) { return make_cost_model(spec, CostModelOptions{}); }

std::unique_ptr<CostModel> make_cost_model(std::string_view spec, const CostModelOptions& options) {
  std::string_view head = spec.substr(0, spec.find(':'));
  std::string_view arg = head.size() < spec.size() ? spec.substr(head.size() + 1) : std::string_view{};
  if (head == "mock") {
    if (arg.empty()) throw UserError::option("cost", "mock", "needs a cost file: mock:FILE");
    return std::make_unique<MockCostModel>(load_mock_costs(std::filesystem::path(arg)));
  }
  if (head == "roofline") return make_roofline(arg, options.host);
  if (head == "measure") {
    if (!options.make_measure) {
      throw UserError::option("cost", "measure", "measured costs are not available in this build");
    }
    return options.make_measure(arg);
  }
  throw UserError::option("cost", std::string(spec),
                  "unknown cost model; expected mock:FILE, roofline[:PROFILE,...] or measure");
}

}  // namespace tessera
