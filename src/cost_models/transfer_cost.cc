// Transfer costs between devices. See src/cost_models/transfer_cost.h.
#include "cost_models/transfer_cost.h"

#include "tessera/error.h"

namespace tessera {

namespace {
// Seconds to move `bytes` over one device's link to the host; 0 for the host itself.
double over_link(size_t bytes, const DeviceProfile& p) {
  if (!p.link) return 0.0;
  return static_cast<double>(bytes) / (p.link->bandwidth_gbs * 1e9) + p.link->latency_us * 1e-6;
}
}  // namespace

Cost transfer_cost(size_t bytes, const DeviceProfile& from, const DeviceProfile& to) {
  if (from.device == to.device) return Cost::zero();
  return Cost::value(over_link(bytes, from) + over_link(bytes, to));
}

TransferCostTable::TransferCostTable(std::vector<DeviceProfile> profiles) : profiles_(std::move(profiles)) {}

const DeviceProfile* TransferCostTable::find(std::string_view device) const {
  for (const DeviceProfile& p : profiles_) {
    if (p.device == device) return &p;
  }
  return nullptr;
}

Cost TransferCostTable::cost(size_t bytes, std::string_view from, std::string_view to) const {
  if (from == to) return Cost::zero();
  const DeviceProfile* a = find(from);
  const DeviceProfile* b = find(to);
  if (!a || !b) return Cost::unknown();
  return transfer_cost(bytes, *a, *b);
}

}  // namespace tessera
