// Rank 0 of a distributed tune: deal jobs, check ranks, append results (see distributed_tune.h).
//
// One loop, one thread (the only one that talks MPI), each turn:
//   1. take every message that has arrived: hello -> check the rank, let it join;
//      result -> append to the database, count; failure or a bad message -> stop the run
//   2. take the results of rank 0's own slots
//   3. a job overdue past timeout + grace -> its rank is presumed dead, its jobs go back in front
//   4. deal queued jobs to free slots (rank 0's own first, then round-robin over joined ranks);
//      a joined rank left with nothing to do once the queue is empty is told to stop
//   5. nothing happened -> sleep 1 ms (never spin on MPI: a spinning rank 0 would disturb its own
//      measurements)
// until every job has an answer. Then it waits (bounded) for ranks that never said hello, so a
// rank on another machine is refused even when the others finished first, and stops everyone.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <set>
#include <thread>

#include "distributed/distributed_tune.h"
#include "distributed/measure_slots.h"
#include "tessera/error.h"
#include "cost_models/estimator.h"

namespace tessera::distributed {
namespace {

using Clock = std::chrono::steady_clock;

// How long rank 0 waits, after the last job, for ranks that never said hello.
constexpr std::chrono::seconds kHelloWait{60};
// A job may come back Unknown (its rank was stopped from outside) this many times before it is
// left to the partition phase, which measures what is missing on rank 0.
constexpr int kMaxTries = 3;

struct Peer {
  bool joined = false;
  bool stopped = false;
  bool dead = false;
  int slots = 0;
  std::map<uint64_t, Clock::time_point> out;   // job -> when it was dealt
};

class Dealer {
 public:
  Dealer(MpiSession& mpi, const Work& work, const std::vector<size_t>& jobs, CostDatabase& db,
         const ResultHook& on_result)
      : mpi_(mpi), work_(work), jobs_(jobs), db_(db), on_result_(on_result), peers_(mpi.size()),
        done_(jobs.size(), 0), tries_(jobs.size(), 0) {
    for (size_t id = 0; id < jobs.size(); ++id) {
      keys_.push_back(cost_key(*work.model, (*work.requests)[jobs[id]]));
      queue_.push_back(id);
    }
    remaining_ = jobs.size();
    report_.ranks = mpi.size();
    report_.measured_per_rank.assign(mpi.size(), 0);
    self_ = describe_rank(0, work);
    report_.hosts.push_back(self_);
    overdue_ = std::chrono::duration_cast<Clock::duration>(work.model->options().timeout + work.grace);
  }

  DealReport run() {
    try {
      loop();
    } catch (...) {
      stop_everyone("error");
      throw;
    }
    stop_everyone(report_.interrupted ? "interrupted" : "done");
    for (int r = 1; r < mpi_.size(); ++r)
      if (!peers_[r].joined && !peers_[r].dead) report_.silent_ranks.push_back(r);
    return report_;
  }

 private:
  void loop() {
    MeasureSlots local(work_.slots, [&](uint64_t request) { return work_.model->estimate_entry((*work_.requests)[request]); });
    while (remaining_ > 0) {
      if (work_.stop && work_.stop->load()) {
        report_.interrupted = true;
        return;   // local slots: their children are killed by the same flag
      }
      bool busy = receive();
      for (const MeasureSlots::Done& d : local.take_results()) {
        busy = true;
        finish(0, d.job, d.entry);
      }
      check_deadlines();
      busy |= deal(local);
      if (!busy) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    // Every job answered: ranks that have not said hello yet must still be checked.
    auto until = Clock::now() + kHelloWait;
    while (!jobs_.empty() && Clock::now() < until && unheard() > 0) {
      if (!receive()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  int unheard() const {
    int n = 0;
    for (int r = 1; r < mpi_.size(); ++r) n += !peers_[r].joined && !peers_[r].dead;
    return n;
  }

  // Handles every message that has arrived; true if there was one.
  bool receive() {
    bool any = false;
    while (auto in = mpi_.poll()) {
      any = true;
      const int from = in->first;
      Message m;
      try {
        m = decode(in->second);
      } catch (const ProtocolError& e) {
        throw UserError("--mpi", "rank " + std::to_string(from), std::string("bad message: ") + e.what());
      }
      if (auto* h = std::get_if<Hello>(&m)) {
        join(from, *h);
      } else if (auto* r = std::get_if<Result>(&m)) {
        if (r->id >= jobs_.size() || !dealt_.count({from, r->id}))
          throw UserError("--mpi", "rank " + std::to_string(from),
                          "bad message: result for job " + std::to_string(r->id) + ", which it was never dealt");
        peers_[from].out.erase(r->id);
        finish(from, r->id, r->entry);
      } else if (auto* f = std::get_if<Failure>(&m)) {
        throw UserError("--mpi", "rank " + std::to_string(from), f->what);
      } else {
        throw UserError("--mpi", "rank " + std::to_string(from),
                        std::string("bad message: a worker sent '") + type_name(m) + "'");
      }
    }
    return any;
  }

  void join(int from, const Hello& h) {
    if (h.rank != from || peers_[from].joined)
      throw UserError("--mpi", "rank " + std::to_string(from), "bad message: hello for rank " + std::to_string(h.rank));
    if (std::optional<std::string> why = rank_mismatch(self_, h))
      throw UserError("--mpi", "", "ranks on different machines or with different inputs cannot share one plan: " +
                                       *why + "; run one tune per kind of machine");
    peers_[from].joined = true;
    peers_[from].slots = h.slots;
    report_.hosts.push_back(h);
  }

  void finish(int rank, uint64_t id, const CostEntry& e) {
    if (done_[id]) {
      ++report_.late;
      return;
    }
    if (e.cost.is_unknown()) {   // not measured: the rank was stopped from outside
      if (++tries_[id] < kMaxTries) {
        queue_.push_front(id);
        ++report_.redealt;
      } else {
        done_[id] = 1;   // left to the partition phase
        --remaining_;
      }
      return;
    }
    done_[id] = 1;
    --remaining_;
    db_.insert(keys_[id], e);
    ++report_.measured_per_rank[rank];
    if (e.cost.is_invalid()) ++report_.invalid;
    if (on_result_) on_result_((*work_.requests)[jobs_[id]], e);
  }

  void check_deadlines() {
    const auto now = Clock::now();
    for (int r = 1; r < mpi_.size(); ++r) {
      Peer& p = peers_[r];
      if (p.dead) continue;
      bool late = std::any_of(p.out.begin(), p.out.end(), [&](const auto& o) { return now - o.second > overdue_; });
      if (!late) continue;
      p.dead = true;
      report_.dead_ranks.push_back(r);
      std::fprintf(stderr, "tessera: rank %d did not answer within %.0f s: presumed dead, dealing its %zu job%s again\n",
                   r, std::chrono::duration<double>(overdue_).count(), p.out.size(), p.out.size() == 1 ? "" : "s");
      for (const auto& [id, when] : p.out) {
        if (done_[id]) continue;
        queue_.push_front(id);
        ++report_.redealt;
      }
      p.out.clear();
    }
  }

  // Deals queued jobs to free slots; true if it dealt or stopped anyone.
  bool deal(MeasureSlots& local) {
    bool any = false;
    while (!queue_.empty() && local.free() > 0) {
      uint64_t id = take();
      dealt_.insert({0, id});
      local.push(id, jobs_[id]);
      any = true;
    }
    for (bool progress = true; progress && !queue_.empty();) {
      progress = false;
      for (int r = 1; r < mpi_.size() && !queue_.empty(); ++r) {
        Peer& p = peers_[r];
        if (!p.joined || p.dead || p.stopped || static_cast<int>(p.out.size()) >= p.slots) continue;
        uint64_t id = take();
        const CostRequest& req = (*work_.requests)[jobs_[id]];
        mpi_.post(r, Job{id, jobs_[id], keys_[id].hash, req.backend});
        p.out[id] = Clock::now();
        dealt_.insert({r, id});
        progress = any = true;
      }
    }
    if (queue_.empty()) {
      for (int r = 1; r < mpi_.size(); ++r) {
        Peer& p = peers_[r];
        if (p.joined && !p.dead && !p.stopped && p.out.empty()) {
          mpi_.post(r, Stop{"no more jobs"});
          p.stopped = true;
          any = true;
        }
      }
    }
    return any;
  }

  uint64_t take() {
    uint64_t id = queue_.front();
    queue_.pop_front();
    return id;
  }

  void stop_everyone(const std::string& why) {
    for (int r = 1; r < mpi_.size(); ++r) {
      if (peers_[r].stopped) continue;
      peers_[r].stopped = true;
      mpi_.post(r, Stop{why});
    }
  }

  MpiSession& mpi_;
  const Work& work_;
  const std::vector<size_t>& jobs_;
  CostDatabase& db_;
  const ResultHook& on_result_;
  Hello self_;
  std::vector<Peer> peers_;
  std::vector<CostKey> keys_;
  std::deque<uint64_t> queue_;
  std::vector<char> done_;
  std::vector<int> tries_;
  std::set<std::pair<int, uint64_t>> dealt_;
  size_t remaining_ = 0;
  Clock::duration overdue_{};
  DealReport report_;
};

}  // namespace

DealReport deal(MpiSession& mpi, const Work& work, const std::vector<size_t>& jobs, CostDatabase& db,
                const ResultHook& on_result) {
  return Dealer(mpi, work, jobs, db, on_result).run();
}

}  // namespace tessera::distributed
