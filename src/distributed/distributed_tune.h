// Distributed tuning over MPI: the measurement phase of `tessera tune --mpi`.
//
//   mpirun -n K tessera tune A.onnx B.onnx --backends ... --cache DB --plan-dir plans/ --mpi
//
// Roles. Every rank parses the same command line, imports the same models and enumerates the same
// requests (tune_protocol.h). Rank 0 alone owns the cost database and the plans:
//
//   rank 0                                         ranks 1..K-1
//   open DB; jobs = distinct keys it lacks         hello (host, machine, versions, digest)
//   deal(): loop                                   serve(): loop
//     hello  -> check same machine and requests      job    -> MeasureSlots (forked, timed out)
//     deal jobs to free slots (own slots too)        result -> rank 0
//     result -> DB append, progress                  stop   -> return
//     a job late past timeout + grace -> its rank is presumed dead, its jobs dealt again
//   stop everyone; search and write plans          (nothing written)
//
// Dealing is dynamic: a rank gets its next job when a slot frees, so a slow measurement holds up
// one slot, not a static share. Rank 0 measures too, in its own slots beside the MPI loop (a host
// idle while it deals would be wasted; dealing costs microseconds per job), so K = 1 is a plain
// tune and "every rank measured something" holds. Workers with nothing left to do are stopped at
// once, so a run ends when its last measurement does.
//
// The database stays single-writer: results travel to rank 0, which appends each under the key it
// computed itself; a worker's answer for a job already done elsewhere (a rank presumed dead that
// was only slow) is dropped, so no key is ever measured twice into the log.
//
// Machines. A measured cost's key holds the machine (CPU model + ISA flags), the backend library
// versions and the thread count (measured_cost_model.h). Rank 0 compares every hello with its own
// and stops the run (UserError, exit 2) naming the hosts when one differs, before that rank
// measures anything; it also compares the digest of all request keys, which catches ranks that
// read other model files or run another tessera build. So no rank's costs ever enter another
// machine's plan. To tune several kinds of machine, run one mpirun per kind.
//
// Failures, and what OpenMPI 4.1 allows. By default mpirun aborts the whole job when any rank
// dies: rank 0 is killed with it, but every result it appended is on disk (the database appends
// one CRC-checked record per write), so the same command again measures only what is missing.
// Under `mpirun --enable-recovery` the other ranks live on: rank 0 notices the dead rank when one
// of its jobs is overdue (timeout + grace: a live rank always answers within the measurement
// timeout, which kills the measuring child), deals its jobs again and finishes the run. (OpenMPI
// 4.1 has no ULFM, so there is no failure notification to use instead; and in that mode mpirun
// exits 0 whatever the ranks return: read the --report file or rank 0's output.) A worker that
// hears nothing from rank 0 for long after it started gives up, so a dead rank 0 does not leave
// hung workers behind. Ctrl-C on mpirun ends the job like a dead rank. In recovery mode no rank
// calls MPI_Finalize (OpenMPI 4.1's finalize waits forever for a dead rank; mpirun accepts the
// exit without it there), so a run with a dead rank still ends.
//
// Test hooks (environment, tests/distributed/ only): TESSERA_TEST_MPI_DIE=R:N makes rank R kill
// itself (SIGKILL) on receiving its N-th job; TESSERA_MACHINE_FINGERPRINT (measured_cost_model.h)
// fakes another machine.
//
// Scale: rank 0 spends ~17 us of CPU per job besides MPI (3-5 us on messages, 13 us appending the
// record: bench/distributed_bench.cc), so it deals and writes ~60 000 jobs a second (~12 000 on a
// loaded 2-core VM); a measurement takes 50 ms to seconds, so rank 0 saturates only beyond
// ~600-3 000 busy slots (docs/benchmarks.md, "Distributed tuning").
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/cost_database.h"
#include "tessera/cost_model.h"
#include "cost_models/measure/measured_cost_model.h"
#include "distributed/tune_protocol.h"

namespace tessera::distributed {

// True when this tessera was built with MPI (CMake option TESSERA_MPI, OpenMPI found).
bool mpi_built_in();

// MPI for the lifetime of the object: MPI_Init_thread (funneled: only this thread talks MPI) in
// the constructor, MPI_Finalize in the destructor (not under mpirun --enable-recovery: see above).
// Throws UserError when MPI is not built in.
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Sends one message without waiting; the text is kept until it is delivered (or until
  // MPI_Finalize for a peer that died).
  void post(int dest, const Message& message);
  // Blocking send (small messages go out eagerly).
  void send(int dest, const Message& message);
  // The next message from `source` (-1: any), if one has arrived: (source, text).
  std::optional<std::pair<int, std::string>> poll(int source = -1);

 private:
  int rank_ = 0, size_ = 1;
  struct Impl;   // posted messages not yet delivered
  std::unique_ptr<Impl> impl_;
};

// What every rank holds identically.
struct Work {
  const std::vector<CostRequest>* requests = nullptr;
  const MeasuredCostModel* model = nullptr;   // no journal: measures, stores nothing
  int slots = 1;                               // -j: measurements at once per rank
  std::chrono::duration<double> grace{2.0};    // a job is overdue after model timeout + grace
  std::atomic<bool>* stop = nullptr;           // the model's stop flag (SIGINT, or rank 0's stop)
};

// This rank's hello: host name, machine, versions, threads, slots, request count and digest.
Hello describe_rank(int rank, const Work& work);
// Why `other` cannot share a plan with `rank0`, or nullopt when it can.
std::optional<std::string> rank_mismatch(const Hello& rank0, const Hello& other);

struct DealReport {
  int ranks = 1;
  std::vector<size_t> measured_per_rank;   // results accepted from each rank (Value or Invalid)
  size_t invalid = 0;
  size_t redealt = 0;            // jobs dealt again (their rank died, or answered Unknown)
  size_t late = 0;               // answers dropped: their job was done elsewhere meanwhile
  std::vector<int> dead_ranks;   // presumed dead (a job overdue)
  std::vector<int> silent_ranks; // never said hello
  std::vector<Hello> hosts;      // rank 0, then every rank that joined
  bool interrupted = false;      // *work.stop was set
};

using ResultHook = std::function<void(const CostRequest&, const CostEntry&)>;

// Rank 0: measures requests[jobs[i]] for every i across all ranks, appending each result to `db`
// under its key as it arrives. Throws UserError when a rank is on another machine or misbehaves
// (after stopping every rank).
DealReport deal(MpiSession& mpi, const Work& work, const std::vector<size_t>& jobs, CostDatabase& db,
                const ResultHook& on_result);
// Ranks >= 1: hello, then measure what rank 0 deals until it says stop.
void serve(MpiSession& mpi, const Work& work);

// This rank is failing with `what` (before or outside deal/serve): rank 0 tells every rank to
// stop; another rank tells rank 0, which stops the run with "rank N on host H: what". Never
// throws; call it before MpiSession's destructor, so that no rank waits on one that is gone.
void abandon(MpiSession& mpi, const std::string& what) noexcept;

}  // namespace tessera::distributed
