// The messages of a distributed tune (`tessera tune --mpi`) and their encoding.
//
// Every rank imports the same models and enumerates the same candidates in the same order
// (candidate_less, CLI order of the models), so a job names a request by its index in that list
// and carries the request's hash and backend as a check; no function is ever serialised.
//
//   rank r >= 1                                   rank 0
//   hello {rank, host, machine, measure, threads,
//          slots, requests, digest}  ───────────▶ checks machine/measure/threads and the digest
//                                                  of every request key against its own: a
//                                                  mismatch stops the run (exit 2, names hosts)
//                                   ◀─────────── job {id, req, h, b}      (up to `slots` at once)
//   result {id, c, s, n[, e]}        ───────────▶ appended to the cost database on arrival
//   failure {what}                   ───────────▶ the run stops with the rank's message
//                                   ◀─────────── stop {why}               (no more jobs: exit)
//
// On the wire a message is one compact JSON object, {"t": "<type>", ...}, sent as MPI_CHAR with
// one tag. decode() checks everything a peer could get wrong (not JSON, unknown type, missing or
// mistyped field, negative counts, a cost that does not parse, oversize) and throws ProtocolError
// with a one-line reason: a bad message is a clear error, never a crash or a wrong cost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>

#include "tessera/cost_database.h"

namespace tessera::distributed {

// Messages longer than this are refused unread (the longest real one is a few hundred bytes).
inline constexpr size_t kMaxMessageBytes = 1 << 20;

struct Hello {
  int rank = 0;
  std::string host;       // gethostname()
  std::string machine;    // machine_fingerprint(): CPU model and ISA
  std::string measure;    // MeasuredCostModel::fingerprint(): backend library versions
  int threads = 1;        // compute threads per measurement
  int slots = 1;          // measurements this rank runs at once (-j)
  uint64_t requests = 0;  // how many requests it enumerated
  std::string digest;     // hash of every request's cost key, in order
};

struct Job {
  uint64_t id = 0;        // rank 0's job number
  uint64_t request = 0;   // index into the request list every rank holds
  std::string hash;       // the request's structural hash (hex), checked by the worker
  std::string backend;
};

struct Result {
  uint64_t id = 0;
  CostEntry entry;        // Unknown: not measured (the rank was stopped); rank 0 deals it again
};

struct Stop {
  std::string why;
};

struct Failure {
  std::string what;
};

using Message = std::variant<Hello, Job, Result, Stop, Failure>;

class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string encode(const Message& message);
// Throws ProtocolError("<what is wrong>") for anything encode() would not have produced.
Message decode(std::string_view text);

// "hello", "job", ... for messages.
const char* type_name(const Message& message);

}  // namespace tessera::distributed
