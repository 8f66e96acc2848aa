// Greedy-by-size offset assignment (see memory_plan.h).
#include "emit/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace tessera {
namespace {

int64_t align_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }
bool live_together(const BufferLifetime& a, const BufferLifetime& b) { return a.first <= b.last && b.first <= a.last; }

}  // namespace

MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers, int64_t alignment) {
  MemoryPlan plan;
  plan.alignment = alignment;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].first < buffers[b].first;
  });
  std::vector<size_t> placed;
  for (size_t i : order) {
    const BufferLifetime& buf = buffers[i];
    plan.sum_bytes += buf.bytes;
    // Occupied ranges of placed buffers live at the same time, by offset: first gap that fits.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t j : placed)
      if (live_together(buf, buffers[j])) busy.emplace_back(plan.offsets[j], plan.offsets[j] + buffers[j].bytes);
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [lo, hi] : busy) {
      if (offset + buf.bytes <= lo) break;
      offset = std::max(offset, align_up(hi, alignment));
    }
    plan.offsets[i] = offset;
    plan.workspace_bytes = std::max(plan.workspace_bytes, offset + buf.bytes);
    placed.push_back(i);
  }
  return plan;
}

std::optional<std::string> verify_memory_plan(const std::vector<BufferLifetime>& buffers, const MemoryPlan& plan) {
  if (plan.offsets.size() != buffers.size()) return "plan has " + std::to_string(plan.offsets.size()) + " offsets";
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (plan.offsets[i] < 0 || plan.offsets[i] % plan.alignment != 0 ||
        plan.offsets[i] + buffers[i].bytes > plan.workspace_bytes)
      return "buffer " + std::to_string(i) + " misplaced at " + std::to_string(plan.offsets[i]);
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      if (!live_together(buffers[i], buffers[j]) || buffers[i].bytes == 0 || buffers[j].bytes == 0) continue;
      bool apart = plan.offsets[i] + buffers[i].bytes <= plan.offsets[j] ||
                   plan.offsets[j] + buffers[j].bytes <= plan.offsets[i];
      if (!apart) return "buffers " + std::to_string(i) + " and " + std::to_string(j) + " are live together and overlap";
    }
  }
  return std::nullopt;
}

}  // namespace tessera
