// Running a program from a test: its exit status (only when it exited: a signal is reported as
// such, never read through WEXITSTATUS), stdout and stderr.
//
//   Process p = run_command(tessera_binary() + " partition m.json --backends ref");
//   CHECK(p.exit_code == 0);                 // -1 when it did not exit normally
//   Child c = start_process({tessera_binary(), "tune", ...}, err_path);   // asynchronous
//   ::kill(c.pid, SIGINT); ProcessStatus s = c.wait();
//
// run_command goes through /bin/sh -c so tests can pass one command line; output is captured in
// files in a private TempDir, so nothing is written elsewhere.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "support/files.h"
#include "support/temp_dir.h"

namespace tessera::testing {

struct ProcessStatus {
  int exit_code = -1;   // the exit status when the process exited normally, else -1
  int signal = 0;       // the signal that ended it, else 0
  bool exited() const { return exit_code >= 0; }
};

inline ProcessStatus decode_wait_status(int status) {
  ProcessStatus s;
  if (WIFEXITED(status)) s.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) s.signal = WTERMSIG(status);
  return s;
}

struct Process : ProcessStatus {
  std::string out, err;
};

// A child started with start_process; wait() reaps it once.
struct Child {
  pid_t pid = -1;
  ProcessStatus wait() {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return decode_wait_status(status);
  }
};

// Starts argv[0] (a path) with stdout to `out_path` and stderr to `err_path` ("" = /dev/null).
inline Child start_process(std::vector<std::string> argv, const std::string& err_path = "",
                           const std::string& out_path = "") {
  Child c;
  c.pid = ::fork();
  if (c.pid == 0) {
    auto redirect = [](const std::string& path, int to) {
      int fd = ::open(path.empty() ? "/dev/null" : path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0 || ::dup2(fd, to) < 0) ::_exit(126);
      ::close(fd);
    };
    redirect(out_path, 1);
    redirect(err_path, 2);
    std::vector<char*> args;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return c;
}

// Runs `command` with /bin/sh and waits for it.
inline Process run_command(const std::string& command) {
  TempDir dir;
  Child c = start_process({"/bin/sh", "-c", command}, dir.file("err"), dir.file("out"));
  Process p;
  static_cast<ProcessStatus&>(p) = c.wait();
  p.out = read_file(dir / "out");
  p.err = read_file(dir / "err");
  return p;
}

// build/tessera, the CLI under test.
inline std::string tessera_binary() { return std::string(TESSERA_BINARY_DIR) + "/tessera"; }

}  // namespace tessera::testing
