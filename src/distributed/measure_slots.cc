// MeasureSlots: a rank's measuring threads (see measure_slots.h).
#include "distributed/measure_slots.h"

#include <exception>
#include <string>

namespace tessera::distributed {

MeasureSlots::MeasureSlots(int slots, Measure measure) : measure_(std::move(measure)), slots_(slots < 1 ? 1 : slots) {
  for (int i = 0; i < slots_; ++i) threads_.emplace_back([this] { serve(); });
}

MeasureSlots::~MeasureSlots() {
  {
    std::lock_guard lock(mu_);
    closing_ = true;
    queue_.clear();
  }
  work_.notify_all();
  for (std::thread& t : threads_) t.join();
}

int MeasureSlots::free() const {
  std::lock_guard lock(mu_);
  return slots_ - running_ - static_cast<int>(queue_.size());
}

bool MeasureSlots::idle() const {
  std::lock_guard lock(mu_);
  return queue_.empty() && running_ == 0 && done_.empty();
}

void MeasureSlots::push(uint64_t job, uint64_t request) {
  {
    std::lock_guard lock(mu_);
    queue_.emplace_back(job, request);
  }
  work_.notify_one();
}

std::vector<MeasureSlots::Done> MeasureSlots::take_results() {
  std::lock_guard lock(mu_);
  std::vector<Done> out;
  out.swap(done_);
  return out;
}

void MeasureSlots::serve() {
  std::unique_lock lock(mu_);
  for (;;) {
    work_.wait(lock, [&] { return closing_ || !queue_.empty(); });
    if (closing_) return;
    auto [job, request] = queue_.front();
    queue_.pop_front();
    ++running_;
    lock.unlock();
    CostEntry entry;
    try {
      entry = measure_(request);
    } catch (const std::exception& e) {   // measurements return costs; this is a bug, kept as a cost
      entry = CostEntry{Cost::invalid(std::string("measurement failed: ") + e.what()), 0.0, 0};
    }
    lock.lock();
    --running_;
    done_.push_back(Done{job, entry});
  }
}

}  // namespace tessera::distributed
