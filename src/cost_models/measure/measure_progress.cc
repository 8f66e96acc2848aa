// Progress line for tessera tune. See measure_progress.h.
#include "cost_models/measure/measure_progress.h"

#include <cmath>

namespace tessera {

MeasureProgress::MeasureProgress(size_t total, bool terminal, std::FILE* out)
    : total_(total), terminal_(terminal), out_(out), start_(std::chrono::steady_clock::now()) {}

std::string MeasureProgress::format(size_t done, size_t total, size_t invalid, double elapsed_s) {
  int pct = total == 0 ? 100 : static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total));
  std::string s = "measured " + std::to_string(done) + "/" + std::to_string(total) + " (" + std::to_string(pct) + "%)";
  if (invalid > 0) s += ", " + std::to_string(invalid) + " invalid";
  if (done == 0) return s + ", ETA ?";
  long eta = std::lround(elapsed_s / static_cast<double>(done) * static_cast<double>(total > done ? total - done : 0));
  char buf[32];
  if (eta >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", eta / 3600, eta / 60 % 60, eta % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", eta / 60, eta % 60);
  return s + ", ETA " + buf;
}

void MeasureProgress::tick(bool invalid) {
  std::lock_guard lock(mu_);
  ++done_;
  if (invalid) ++invalid_;
  if (terminal_) {
    print_locked();
    return;
  }
  int step = total_ == 0 ? 10 : static_cast<int>(10 * done_ / total_);
  if (step > last_step_) {
    last_step_ = step;
    print_locked();
  }
}

void MeasureProgress::finish() {
  std::lock_guard lock(mu_);
  if (finished_) return;
  finished_ = true;
  if (terminal_) {
    if (done_ > 0) std::fputc('\n', out_);
  } else if (done_ > 0 && last_step_ < 10 && done_ < total_) {
    print_locked();   // interrupted between steps: say where it stopped
  }
  std::fflush(out_);
}

size_t MeasureProgress::done() const {
  std::lock_guard lock(mu_);
  return done_;
}

void MeasureProgress::print_locked() {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string line = format(done_, total_, invalid_, elapsed);
  if (terminal_)
    std::fprintf(out_, "\r%s\033[K", line.c_str());   // \033[K: clear what a longer line left
  else
    std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

MeasureTicker::MeasureTicker(bool terminal, std::FILE* out)
    : terminal_(terminal), out_(out), start_(std::chrono::steady_clock::now()) {}

std::string MeasureTicker::line_locked() const {
  char buf[128];
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::snprintf(buf, sizeof buf, "%zu function%s (%zu invalid), %.1f s", done_, done_ == 1 ? "" : "s", invalid_, s);
  return buf;
}

void MeasureTicker::tick(bool invalid) {
  std::lock_guard lock(mu_);
  ++done_;
  if (invalid) ++invalid_;
  if (terminal_) std::fprintf(out_, "\rtessera: measuring: %s\033[K", line_locked().c_str());
  else if (done_ == 1 || done_ % 100 == 0) std::fprintf(out_, "tessera: measuring: %s\n", line_locked().c_str());
  std::fflush(out_);
}

MeasureTicker::~MeasureTicker() {
  std::lock_guard lock(mu_);
  if (done_ == 0) return;
  if (terminal_) std::fputc('\n', out_);
  std::fprintf(out_, "tessera: measured %s\n", line_locked().c_str());
  std::fflush(out_);
}

}  // namespace tessera
