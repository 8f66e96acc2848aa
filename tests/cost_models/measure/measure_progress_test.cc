// The tune progress line: its text, and plain-mode output only at 10% steps.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <string>

#include "cost_models/measure/measure_progress.h"

using tessera::MeasureProgress;

TEST_CASE("progress text: count, percent, invalid, ETA") {
  CHECK(MeasureProgress::format(0, 456, 0, 0.0) == "measured 0/456 (0%), ETA ?");
  CHECK(MeasureProgress::format(123, 456, 0, 15.5) == "measured 123/456 (26%), ETA 0:42");
  CHECK(MeasureProgress::format(10, 20, 2, 100.0) == "measured 10/20 (50%), 2 invalid, ETA 1:40");
  CHECK(MeasureProgress::format(1, 2, 0, 4000.0) == "measured 1/2 (50%), ETA 1:06:40");
  CHECK(MeasureProgress::format(5, 5, 0, 3.0) == "measured 5/5 (100%), ETA 0:00");
}

namespace {
std::string run(size_t total, size_t ticks, bool terminal) {
  std::FILE* f = std::tmpfile();
  MeasureProgress p(total, terminal, f);
  for (size_t i = 0; i < ticks; ++i) p.tick(false);
  p.finish();
  std::rewind(f);
  std::string out;
  for (int c; (c = std::fgetc(f)) != EOF;) out.push_back(static_cast<char>(c));
  std::fclose(f);
  return out;
}
size_t count(const std::string& s, char c) { return static_cast<size_t>(std::count(s.begin(), s.end(), c)); }
}  // namespace

TEST_CASE("plain mode prints one line per 10% step; terminal mode redraws one line") {
  std::string plain = run(100, 100, false);
  CHECK(count(plain, '\n') == 10);
  CHECK(count(plain, '\r') == 0);
  CHECK(plain.find("measured 100/100 (100%)") != std::string::npos);
  std::string partial = run(100, 15, false);   // interrupted: the last count is still reported
  CHECK(partial.find("measured 15/100 (15%)") != std::string::npos);
  std::string tty = run(5, 5, true);
  CHECK(count(tty, '\r') == 5);
  CHECK(count(tty, '\n') == 1);
}
