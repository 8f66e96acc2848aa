// Transfer cost: what it costs to move one value between devices.
//
// Terms. Every device profile (device_profile.h) either is the host (no link) or has a link to the
// host {bandwidth_gbs, latency_us}. A value produced on device A and consumed on device B:
//   A == B                    0
//   host -> gpu, gpu -> host  bytes / link_bw(gpu) + latency(gpu)
//   gpu0 -> gpu1              staged through the host: both links, one after the other
// Devices are matched by DeviceProfile::device ("cpu", "gpu"). A device with no profile makes the
// transfer Unknown: the search still works, and the plan says so instead of inventing a number.
//
// Trade-off: no peer-to-peer links and no overlap of copies with compute; a value is charged once
// per consuming device (the search decides how often it crosses, this only prices one crossing).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "tessera/cost.h"
#include "cost_models/device_profile.h"

namespace tessera {

// One crossing between two profiles, seconds.
Cost transfer_cost(size_t bytes, const DeviceProfile& from, const DeviceProfile& to);

// Transfer costs over a set of profiles, looked up by device name. Immutable, thread-safe.
class TransferCostTable {
 public:
  explicit TransferCostTable(std::vector<DeviceProfile> profiles);
  // Zero when from == to; Unknown when either device has no profile.
  Cost cost(size_t bytes, std::string_view from, std::string_view to) const;
  const DeviceProfile* find(std::string_view device) const;

 private:
  std::vector<DeviceProfile> profiles_;
};

}  // namespace tessera
