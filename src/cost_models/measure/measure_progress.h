// MeasureProgress: the progress report of a tuning run on stderr.
//
//   terminal:  one line redrawn with '\r':   measured 123/456 (27%), 2 invalid, ETA 0:42
//   otherwise: one plain line per 10% step (logs and CI output stay short and greppable)
//
// The ETA is elapsed / done x remaining: measurements of one run cost about the same (one time
// budget each), so the simple rate is as good as any smoothing. tick() is called from the
// measuring threads (MeasureOptions::on_measured); one mutex serialises the output.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>

namespace tessera {

class MeasureProgress {
 public:
  // `total` measurements to come; `terminal`: redraw in place (usually isatty(stderr)).
  MeasureProgress(size_t total, bool terminal, std::FILE* out = stderr);

  void tick(bool invalid);
  // Ends the line (terminal) or prints the last step if it was not printed yet.
  void finish();

  size_t done() const;
  // "measured 123/456 (27%), 2 invalid, ETA 0:42" for the given counts and elapsed seconds.
  static std::string format(size_t done, size_t total, size_t invalid, double elapsed_s);

 private:
  void print_locked();

  mutable std::mutex mu_;
  size_t total_, done_ = 0, invalid_ = 0;
  int last_step_ = 0;   // last 10% step printed (plain mode)
  bool terminal_;
  bool finished_ = false;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_;
};

// The progress of measurements whose number is not known ahead: `partition --cost measure` and
// `bench --cost measure`, where the estimator decides what to measure. The same two modes:
//   terminal:  "measuring: 37 functions (1 invalid), 2.4 s" redrawn in place
//   otherwise: that line at the first measurement and then every 100
// and, when it is destroyed after any measurement, "measured 37 functions in 2.4 s".
class MeasureTicker {
 public:
  explicit MeasureTicker(bool terminal, std::FILE* out = stderr);
  ~MeasureTicker();
  void tick(bool invalid);

 private:
  std::string line_locked() const;
  std::mutex mu_;
  size_t done_ = 0, invalid_ = 0;
  bool terminal_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace tessera
