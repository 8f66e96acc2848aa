// run_isolated: run a function in a forked child process, with a timeout, and bring its answer
// (a string) back over a pipe. The one isolation primitive of the measured cost model.
//
//   parent                                  child (fork)
//   pipe, fork ───────────────────────────▶ reset SIGINT/SIGTERM, die with the parent
//   poll(pipe, 50 ms slices) ◀── write ──── text = body()   (an exception: its what(), flagged)
//   EOF ─▶ waitpid                          _exit(0)
//   deadline passed or *stop set ─▶ SIGKILL, waitpid
//
// Outcome: Ok(text), Failed(what) for an exception in body, Crashed(signal), Exited(status),
// TimedOut, Stopped. Nothing in the parent is touched by the child: a segfault, abort() or an
// endless loop in body costs one child. The 50 ms slice bounds how late `stop` is noticed.
//
// fork() from a multi-threaded parent: only the calling thread exists in the child. glibc makes
// malloc and stdio usable after fork; body must not wait on locks other parent threads may hold
// (it runs compilers and kernels, which the parent's other threads never lock while they are only
// forking and waiting). The child ends with _exit, so no parent destructor or atexit handler runs
// in it.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

namespace tessera {

struct IsolatedResult {
  enum class Status { Ok, Failed, Crashed, Exited, TimedOut, Stopped };
  Status status = Status::Ok;
  std::string text;     // Ok: body's answer; Failed: the exception's what()
  int code = 0;         // Crashed: the signal; Exited: the exit status

  // "crashed: signal 11 (Segmentation fault)", "timed out after 10 s", ...; "" for Ok.
  std::string describe(std::chrono::duration<double> timeout) const;
};

IsolatedResult run_isolated(const std::function<std::string()>& body, std::chrono::duration<double> timeout,
                            const std::atomic<bool>* stop = nullptr);

}  // namespace tessera
