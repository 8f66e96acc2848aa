// A oneDNN function's intermediates in one arena (see onednn_memory_plan.h).
#include "backends/onednn/onednn_memory_plan.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>

#include "backends/onednn/onednn_program.h"

namespace tessera::onednn {

ArenaPlan plan_arena(const std::vector<BufferLife>& buffers, size_t align) {
  const auto up = [align](size_t n) { return (n + align - 1) / align * align; };
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return buffers[a].bytes > buffers[b].bytes; });
  ArenaPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> placed;
  for (size_t i : order) {
    const BufferLife& me = buffers[i];
    // The placed buffers live at the same time as this one, by offset: take the lowest gap.
    std::vector<std::pair<size_t, size_t>> busy;   // [offset, end)
    for (size_t j : placed)
      if (buffers[j].first <= me.last && me.first <= buffers[j].last) busy.emplace_back(plan.offsets[j], plan.offsets[j] + up(buffers[j].bytes));
    std::sort(busy.begin(), busy.end());
    size_t at = 0;
    for (const auto& [lo, hi] : busy) {
      if (at + up(me.bytes) <= lo) break;
      at = std::max(at, hi);
    }
    plan.offsets[i] = at;
    plan.bytes = std::max(plan.bytes, at + up(me.bytes));
    placed.push_back(i);
  }
  return plan;
}

void OnednnProgram::plan_memory() {
  for (const Step& s : steps_)
    if (s.host && s.args.empty()) return;   // a host step that may touch anything: keep every buffer
  struct Buffer {
    const char* base;
    size_t bytes;
  };
  std::vector<Buffer> bufs;
  for (const memory& m : owned_) {
    const size_t bytes = m.get_desc().get_size();
    if (const void* h = m.get_data_handle(); h != nullptr && bytes > 0) bufs.push_back({static_cast<const char*>(h), bytes});
  }
  std::sort(bufs.begin(), bufs.end(), [](const Buffer& a, const Buffer& b) { return a.base < b.base; });
  const auto find = [&](const memory& m) -> std::ptrdiff_t {
    const char* h = static_cast<const char*>(m.get_data_handle());
    if (h == nullptr) return -1;   // bound per run (a boundary value)
    auto it = std::upper_bound(bufs.begin(), bufs.end(), h, [](const char* p, const Buffer& b) { return p < b.base; });
    if (it == bufs.begin()) return -1;
    --it;
    return h < it->base + it->bytes ? it - bufs.begin() : -1;
  };

  std::vector<BufferLife> life(bufs.size());
  std::vector<char> seen(bufs.size(), 0), movable(bufs.size(), 1);
  std::vector<memory> touched;   // every memory a step reads or writes in some buffer
  size_t step = 0;
  const auto visit = [&](const Step& s) {
    for (const auto& [arg, m] : s.args) {
      const std::ptrdiff_t b = find(m);
      if (b < 0) continue;
      const auto i = static_cast<size_t>(b);
      if (!seen[i]) {
        seen[i] = 1;
        life[i].first = step;
        life[i].bytes = bufs[i].bytes;
      }
      if (step == life[i].first && arg != DNNL_ARG_DST) movable[i] = 0;   // read before any step wrote it
      life[i].last = step;
      touched.push_back(m);
    }
    ++step;
  };
  for (const Step& s : steps_) visit(s);
  for (const Step& s : final_reorders_) visit(s);
  for (const CachedReorder& c : cached_)   // weights reordered before the steps, kept between runs
    if (const std::ptrdiff_t b = find(c.to); b >= 0) movable[static_cast<size_t>(b)] = 0;

  std::vector<size_t> moved;
  std::vector<BufferLife> lives;
  size_t before = 0;
  for (size_t i = 0; i < bufs.size(); ++i)
    if (seen[i] && movable[i]) {
      moved.push_back(i);
      lives.push_back(life[i]);
      before += bufs[i].bytes;
    }
  const ArenaPlan plan = plan_arena(lives, kArenaAlign);
  if (moved.size() < 2 || plan.bytes >= before) return;

  arena_ = huge_bytes(plan.bytes);   // on huge pages from 2 MiB on (onednn_huge_pages.cc)
  if (!arena_) return;
  std::vector<std::ptrdiff_t> slot(bufs.size(), -1);   // by buffer: its index in `moved`
  for (size_t k = 0; k < moved.size(); ++k) slot[moved[k]] = static_cast<std::ptrdiff_t>(k);
  // Every memory over a moved buffer (the buffer's own, and each view a step uses) gets its new
  // address; all are worked out before any is set (setting the buffer's own frees the old bytes).
  std::map<dnnl_memory_t, std::pair<memory, void*>> to_set;
  const auto relocate = [&](const memory& m) {
    const std::ptrdiff_t b = find(m);
    if (b < 0 || slot[static_cast<size_t>(b)] < 0) return;
    const size_t k = static_cast<size_t>(slot[static_cast<size_t>(b)]);
    const auto delta = static_cast<const char*>(m.get_data_handle()) - bufs[static_cast<size_t>(b)].base;
    to_set.emplace(m.get(), std::pair<memory, void*>{m, arena_.get() + plan.offsets[k] + delta});
  };
  for (const memory& m : touched) relocate(m);
  for (const memory& m : owned_) relocate(m);
  for (auto& [key, mv] : to_set) mv.first.set_data_handle(mv.second);
  owned_bytes_ = owned_bytes_ - before + plan.bytes;
}

}  // namespace tessera::onednn
