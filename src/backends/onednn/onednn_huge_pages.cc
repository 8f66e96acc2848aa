// A oneDNN function's reordered weights and its arena on transparent huge pages.
//
// Terms. A *huge page* is a 2 MiB page of the x86-64 MMU: one TLB entry maps 512 times the bytes
// of a 4 KiB page. Linux backs anonymous memory with them (transparent huge pages) either always
// or only where a process asks with madvise(MADV_HUGEPAGE), as Debian's default ("madvise") has it.
//
// Why. A CNN's run reads each of its weights once, and a large network's weights outgrow every
// cache: resnext50_32x4d 100 MB, densenet121 32 MB. On 4 KiB pages each run then walks the page
// tables for every 4 KiB of weights (25,000 walks per run on resnext50_32x4d; under a hypervisor
// each walk is two-dimensional), and its late 1x1 convs, which stream 2-8 MB of weights over 16-64
// pixels, are bound by that stream. On 2 MiB pages the same bytes take 50 TLB entries.
//
// What. After the build and the memory plan (onednn_memory_plan.cc), pool_constants() moves every
// buffer that a cached reorder fills (weights reordered into oneDNN's layout once, or once per new
// weights pointer, and kept between runs: weights_mem) into one allocation, aligned to 2 MiB and
// advised MADV_HUGEPAGE when it spans at least one huge page; the arena is allocated the same way
// (huge_bytes). Each memory over a moved buffer (the reorder's destination, every view a step
// uses) gets its new address, as the memory plan does for the buffers it moves; bytes already
// written (constant weights, reordered at build time) are copied. Where the kernel gives no huge
// page the madvise is a no-op and the layout is what it was, one allocation instead of many.
//
// What must hold (as for the memory plan): every step that touches a buffer is seen, so a
// function with a host step that lists no memories is left as built.
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "backends/onednn/onednn_program.h"

namespace tessera::onednn {

std::unique_ptr<std::byte, OnednnProgram::FreeBytes> OnednnProgram::huge_bytes(size_t bytes, bool* advised) {
  constexpr size_t kHuge = size_t{2} << 20, kAlign = 64;
  if (advised) *advised = false;
  if (bytes < kHuge) return std::unique_ptr<std::byte, OnednnProgram::FreeBytes>(static_cast<std::byte*>(std::aligned_alloc(kAlign, (bytes + kAlign - 1) / kAlign * kAlign)));
  const size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
  auto* p = static_cast<std::byte*>(std::aligned_alloc(kHuge, rounded));
  if (p != nullptr && madvise(p, rounded, MADV_HUGEPAGE) == 0 && advised) *advised = true;
  return std::unique_ptr<std::byte, OnednnProgram::FreeBytes>(p);
}

void OnednnProgram::pool_constants() {
  for (const Step& s : steps_)
    if (s.host && s.args.empty()) return;   // a host step that may touch anything: keep every buffer
  struct Buffer {
    const char* base;
    size_t bytes;
    const void* written;   // the reorder's done_for: bytes already there
  };
  std::vector<Buffer> bufs;
  for (const CachedReorder& c : cached_) {
    const size_t bytes = c.to.get_desc().get_size();
    if (const void* h = c.to.get_data_handle(); h != nullptr && bytes > 0) bufs.push_back({static_cast<const char*>(h), bytes, c.done_for});
  }
  std::sort(bufs.begin(), bufs.end(), [](const Buffer& a, const Buffer& b) { return a.base < b.base; });
  bufs.erase(std::unique(bufs.begin(), bufs.end(), [](const Buffer& a, const Buffer& b) { return a.base == b.base; }), bufs.end());
  const auto up = [](size_t n) { return (n + kArenaAlign - 1) / kArenaAlign * kArenaAlign; };
  size_t total = 0;
  std::vector<size_t> offset;
  for (const Buffer& b : bufs) {
    offset.push_back(total);
    total += up(b.bytes);
  }
  if (total < (size_t{2} << 20)) return;   // less than one huge page: nothing to gain
  bool advised = false;
  auto pool = huge_bytes(total, &advised);
  if (!pool || !advised) return;
  const auto find = [&](const memory& m) -> std::ptrdiff_t {
    const char* h = static_cast<const char*>(m.get_data_handle());
    if (h == nullptr) return -1;
    auto it = std::upper_bound(bufs.begin(), bufs.end(), h, [](const char* p, const Buffer& b) { return p < b.base; });
    if (it == bufs.begin()) return -1;
    --it;
    return h < it->base + it->bytes ? it - bufs.begin() : -1;
  };
  for (size_t i = 0; i < bufs.size(); ++i)
    if (bufs[i].written != nullptr) std::memcpy(pool.get() + offset[i], bufs[i].base, bufs[i].bytes);
  // Every memory over a moved buffer gets its new address; all are worked out before any is set
  // (setting a buffer's own memory frees its old bytes).
  std::map<dnnl_memory_t, std::pair<memory, void*>> to_set;
  const auto relocate = [&](const memory& m) {
    const std::ptrdiff_t b = find(m);
    if (b < 0) return;
    const auto i = static_cast<size_t>(b);
    const auto delta = static_cast<const char*>(m.get_data_handle()) - bufs[i].base;
    to_set.emplace(m.get(), std::pair<memory, void*>{m, pool.get() + offset[i] + delta});
  };
  for (const Step& s : steps_)
    for (const auto& [arg, m] : s.args) relocate(m);
  for (const Step& s : final_reorders_)
    for (const auto& [arg, m] : s.args) relocate(m);
  for (const CachedReorder& c : cached_) relocate(c.to);
  for (const memory& m : owned_) relocate(m);
  for (auto& [key, mv] : to_set) mv.first.set_data_handle(mv.second);
  pools_.push_back(std::move(pool));
  huge_page_bytes_ += total;
}

}  // namespace tessera::onednn
