// run_isolated: fork, run, answer over a pipe, with a timeout. See isolated_call.h.
#include "cost_models/measure/isolated_call.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <exception>
#include <sstream>
#include <system_error>
#include <thread>

namespace tessera {
namespace {

using Clock = std::chrono::steady_clock;

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

[[noreturn]] void child_main(int fd, pid_t parent, const std::function<std::string()>& body) {
  // Die with the parent (a kill -9 of `tessera tune` must not leave measurements running), and
  // take default dispositions for the signals the parent may handle.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);
  // A crash handler inherited from the parent (a test framework's, say) would report the child's
  // crash as the parent's: the child dies plainly and the parent tells.
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) ::signal(sig, SIG_DFL);
  // Sibling measurements' pipe ends were inherited too; holding them would delay their EOF.
  if (fd != 3) {
    ::dup2(fd, 3);
    fd = 3;
  }
  ::close_range(4, ~0U, 0);
  std::string out;
  try {
    out = "O" + body();
  } catch (const std::exception& e) {
    out = std::string("F") + e.what();
  } catch (...) {
    out = "Fnon-standard exception";
  }
  write_all(fd, out);
  ::_exit(0);
}

void kill_and_reap(pid_t pid) {
  ::kill(pid, SIGKILL);
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
}

std::string seconds_text(double s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

}  // namespace

std::string IsolatedResult::describe(std::chrono::duration<double> timeout) const {
  switch (status) {
    case Status::Ok: return {};
    case Status::Failed: return text;
    case Status::Crashed: {
      const char* name = ::strsignal(code);
      return "crashed: signal " + std::to_string(code) + (name ? std::string(" (") + name + ")" : "");
    }
    case Status::Exited: return "exited with status " + std::to_string(code) + " before answering";
    case Status::TimedOut: return "timed out after " + seconds_text(timeout.count()) + " s";
    case Status::Stopped: return "stopped";
  }
  return {};
}

IsolatedResult run_isolated(const std::function<std::string()>& body, std::chrono::duration<double> timeout,
                            const std::atomic<bool>* stop) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::system_error(e, std::generic_category(), "fork");
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], parent, body);
  }
  ::close(fds[1]);

  IsolatedResult r;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(timeout);
  std::string buf;
  char chunk[4096];
  for (;;) {
    if (stop && stop->load()) {
      ::close(fds[0]);
      kill_and_reap(pid);
      r.status = IsolatedResult::Status::Stopped;
      return r;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      ::close(fds[0]);
      kill_and_reap(pid);
      r.status = IsolatedResult::Status::TimedOut;
      return r;
    }
    pollfd p{fds[0], POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 50)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    ssize_t n = ::read(fds[0], chunk, sizeof chunk);
    if (n > 0) {
      buf.append(chunk, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;   // EOF: the child has answered (or died)
    }
  }
  ::close(fds[0]);

  // EOF: the child is exiting. Reap it, still under the deadline (it could linger in a destructor).
  int st = 0;
  for (;;) {
    pid_t w = ::waitpid(pid, &st, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) throw std::system_error(errno, std::generic_category(), "waitpid");
    if (Clock::now() >= deadline) {
      kill_and_reap(pid);
      r.status = IsolatedResult::Status::TimedOut;
      return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (WIFSIGNALED(st)) {
    r.status = IsolatedResult::Status::Crashed;
    r.code = WTERMSIG(st);
  } else if (buf.empty() || (WIFEXITED(st) && WEXITSTATUS(st) != 0)) {
    r.status = IsolatedResult::Status::Exited;
    r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  } else {
    r.status = buf[0] == 'O' ? IsolatedResult::Status::Ok : IsolatedResult::Status::Failed;
    r.text = buf.substr(1);
  }
  return r;
}

}  // namespace tessera
