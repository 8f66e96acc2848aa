// Ranks >= 1 of a distributed tune: hello, then measure what rank 0 deals (see distributed_tune.h).
//
// One loop on the MPI thread: take rank 0's messages (job -> a slot; stop -> finish), send the
// slots' results, sleep 1 ms when nothing happened. A job is checked against this rank's own
// request list (index in range, same hash and backend) before it is measured; a mismatch goes
// back to rank 0 as a failure, which stops the run with that message.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "distributed/distributed_tune.h"
#include "distributed/measure_slots.h"
#include "tessera/error.h"
#include "ir/structural_hash.h"

namespace tessera::distributed {
namespace {

using Clock = std::chrono::steady_clock;

// TESSERA_TEST_MPI_DIE=R:N (tests only): rank R kills itself on receiving its N-th job. 0: never.
int die_on_job(int rank) {
  const char* text = std::getenv("TESSERA_TEST_MPI_DIE");
  if (!text) return 0;
  int r = -1, n = 0;
  if (std::sscanf(text, "%d:%d", &r, &n) != 2 || r != rank || n < 1) return 0;
  return n;
}

// Why `job` is not a job of this rank's request list, or "" when it is.
std::string check_job(const Job& job, const std::vector<CostRequest>& requests) {
  if (job.request >= requests.size())
    return "job " + std::to_string(job.id) + " names request " + std::to_string(job.request) + " of " +
           std::to_string(requests.size());
  const CostRequest& r = requests[job.request];
  if (hash_hex(r.hash) != job.hash || r.backend != job.backend)
    return "job " + std::to_string(job.id) + " is " + job.hash + " on " + job.backend + ", request " +
           std::to_string(job.request) + " here is " + hash_hex(r.hash) + " on " + r.backend;
  return "";
}

}  // namespace

void serve(MpiSession& mpi, const Work& work) {
  const int me = mpi.rank();
  const int die_at = die_on_job(me);
  int received = 0;
  mpi.send(0, describe_rank(me, work));

  // Rank 0 answers a hello at once (a job or stop) and is never silent longer than one
  // measurement after that; far longer means it is gone (possible under --enable-recovery).
  const auto silence_limit = std::chrono::duration_cast<Clock::duration>(
      2 * (work.model->options().timeout + work.grace) + std::chrono::seconds(30));
  bool heard = false;
  auto last_heard = Clock::now();
  bool stopping = false;
  std::string failure;

  MeasureSlots slots(work.slots, [&](uint64_t request) { return work.model->estimate_entry((*work.requests)[request]); });
  for (;;) {
    bool busy = false;
    while (auto in = mpi.poll(0)) {
      busy = heard = true;
      last_heard = Clock::now();
      Message m;
      try {
        m = decode(in->second);
      } catch (const ProtocolError& e) {
        failure = std::string("bad message from rank 0: ") + e.what();
        break;
      }
      if (auto* job = std::get_if<Job>(&m)) {
        if (++received == die_at) ::raise(SIGKILL);
        std::string bad = check_job(*job, *work.requests);
        if (!bad.empty()) {
          failure = bad;
          break;
        }
        slots.push(job->id, job->request);
      } else if (std::get_if<Stop>(&m)) {
        stopping = true;
      } else {
        failure = std::string("bad message from rank 0: '") + type_name(m) + "'";
        break;
      }
    }
    if (!failure.empty()) {
      // Rank 0 stops the run with this message; until then, nothing more is measured here.
      mpi.send(0, Failure{failure});
      failure.clear();
      stopping = true;
    }
    if (stopping) {
      if (work.stop) work.stop->store(true);   // running measurements end now, unstored
      return;   // ~MeasureSlots waits for their children
    }
    for (const MeasureSlots::Done& d : slots.take_results()) {
      busy = true;
      mpi.send(0, Result{d.job, d.entry});
    }
    if (heard && Clock::now() - last_heard > silence_limit && slots.idle()) {
      std::fprintf(stderr, "tessera: rank %d: no word from rank 0 for %.0f s; giving up\n", me,
                   std::chrono::duration<double>(silence_limit).count());
      return;
    }
    if (!busy) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void abandon(MpiSession& mpi, const std::string& what) noexcept {
  try {
    if (mpi.rank() == 0) {
      for (int r = 1; r < mpi.size(); ++r) mpi.post(r, Stop{"rank 0 failed"});
    } else {
      char host[256] = {};
      ::gethostname(host, sizeof host - 1);
      mpi.send(0, Failure{"rank " + std::to_string(mpi.rank()) + " on host " + host + ": " + what});
    }
  } catch (...) {   // MPI itself failing: mpirun ends the job
  }
}

}  // namespace tessera::distributed
