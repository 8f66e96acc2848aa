// MpiSession over OpenMPI: init/finalize, one tag, text messages (see distributed_tune.h).
#include <mpi.h>

#include <cstdlib>
#include <deque>

#include "distributed/distributed_tune.h"
#include "tessera/error.h"

namespace tessera::distributed {
namespace {

constexpr int kTag = 14;   // every tune message; the type is inside (tune_protocol.h)

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(code, text, &len);
  return std::string(text, static_cast<size_t>(len));
}

}  // namespace

struct MpiSession::Impl {
  struct Posted {
    std::string text;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  std::deque<Posted> posted;
  bool recovery = false;   // launched by mpirun --enable-recovery

  // Forgets delivered messages.
  void reap() {
    for (auto it = posted.begin(); it != posted.end();) {
      int done = 0;
      MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
      it = done ? posted.erase(it) : std::next(it);
    }
  }
};

bool mpi_built_in() { return true; }

MpiSession::MpiSession() : impl_(std::make_unique<Impl>()) {
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    throw UserError("--mpi", "", "MPI_Init failed");
  // Errors come back as codes (turned into messages here), never as an abort from inside MPI.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  const char* recovery = std::getenv("OMPI_MCA_orte_enable_recovery");
  impl_->recovery = recovery && *recovery && std::string(recovery) != "0";
}

MpiSession::~MpiSession() {
  // Under `mpirun --enable-recovery` a rank may have died, and OpenMPI 4.1's MPI_Finalize then
  // waits forever in its fence for the dead one (seen in tests/distributed/). mpirun in that mode
  // accepts a rank that exits without finalizing, so do not finalize there.
  if (impl_->recovery) return;
  impl_->reap();
  // Messages to dead ranks never complete: let MPI drop them; their text lives until Finalize.
  for (Impl::Posted& p : impl_->posted)
    if (p.request != MPI_REQUEST_NULL) MPI_Request_free(&p.request);
  MPI_Finalize();
}

void MpiSession::post(int dest, const Message& message) {
  impl_->reap();
  Impl::Posted& p = impl_->posted.emplace_back();
  p.text = encode(message);
  int rc = MPI_Isend(p.text.data(), static_cast<int>(p.text.size()), MPI_CHAR, dest, kTag, MPI_COMM_WORLD,
                     &p.request);
  if (rc != MPI_SUCCESS) p.request = MPI_REQUEST_NULL;   // a dead peer: nothing to wait for
}

void MpiSession::send(int dest, const Message& message) {
  std::string text = encode(message);
  int rc = MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, dest, kTag, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS)
    throw UserError("--mpi", "rank " + std::to_string(rank_), "cannot send to rank " + std::to_string(dest) + ": " +
                                                               mpi_error_text(rc));
}

std::optional<std::pair<int, std::string>> MpiSession::poll(int source) {
  int flag = 0;
  MPI_Status status;
  int rc = MPI_Iprobe(source < 0 ? MPI_ANY_SOURCE : source, kTag, MPI_COMM_WORLD, &flag, &status);
  if (rc != MPI_SUCCESS)
    throw UserError("--mpi", "rank " + std::to_string(rank_), "cannot receive: " + mpi_error_text(rc));
  if (!flag) return std::nullopt;
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);   // an oversize one is refused by decode()
  const int from = status.MPI_SOURCE;
  std::string text(static_cast<size_t>(count), '\0');
  rc = MPI_Recv(text.data(), count, MPI_CHAR, from, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS)
    throw UserError("--mpi", "rank " + std::to_string(rank_),
                    "cannot receive from rank " + std::to_string(from) + ": " + mpi_error_text(rc));
  return std::make_pair(from, std::move(text));
}

}  // namespace tessera::distributed
