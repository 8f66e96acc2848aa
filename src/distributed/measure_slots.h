// MeasureSlots: the measurements one rank runs at once (-j N: N slots), each on a thread of its
// own that forks the isolated measurement (MeasuredCostModel) and waits for it.
//
//   push(job) ─▶ queue ─▶ slot thread: entry = measure(request) ─▶ results ─▶ take_results()
//
// The rank's MPI thread (the only one that talks to other ranks) pushes jobs and takes results;
// slot threads never touch MPI, so MPI needs only MPI_THREAD_FUNNELED. free() counts slots neither
// running nor promised to a queued job, so the owner never queues more than it can start.
//
// Not needed for correctness: more than one slot (a rank with -j 1 is one thread and a queue).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "tessera/cost_database.h"

namespace tessera::distributed {

class MeasureSlots {
 public:
  using Measure = std::function<CostEntry(uint64_t request)>;
  struct Done {
    uint64_t job = 0;
    CostEntry entry;
  };

  MeasureSlots(int slots, Measure measure);
  ~MeasureSlots();   // waits for running measurements, drops queued ones
  MeasureSlots(const MeasureSlots&) = delete;
  MeasureSlots& operator=(const MeasureSlots&) = delete;

  int free() const;
  bool idle() const;   // nothing queued, running or not yet taken
  void push(uint64_t job, uint64_t request);
  std::vector<Done> take_results();

 private:
  void serve();

  Measure measure_;
  int slots_;
  mutable std::mutex mu_;
  std::condition_variable work_;
  std::deque<std::pair<uint64_t, uint64_t>> queue_;
  std::vector<Done> done_;
  int running_ = 0;
  bool closing_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace tessera::distributed
