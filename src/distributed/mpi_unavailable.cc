// MpiSession when tessera is built without MPI (CMake option TESSERA_MPI=OFF, or no OpenMPI):
// `tessera tune --mpi` says so and exits 2. deal() and serve() (mpi_dealer.cc, mpi_worker.cc) use
// only MpiSession's interface, so they build either way; without MPI nothing can reach them.
#include "distributed/distributed_tune.h"
#include "tessera/error.h"

namespace tessera::distributed {

struct MpiSession::Impl {};

bool mpi_built_in() { return false; }

MpiSession::MpiSession() {
  throw UserError("--mpi", "", "this tessera was built without MPI (CMake found no OpenMPI, or -DTESSERA_MPI=OFF: "
                               "install libopenmpi-dev and openmpi-bin, then configure and build again)");
}

MpiSession::~MpiSession() = default;

void MpiSession::post(int, const Message&) {}
void MpiSession::send(int, const Message&) {}
std::optional<std::pair<int, std::string>> MpiSession::poll(int) { return std::nullopt; }

}  // namespace tessera::distributed
