// The `tessera bench --svg` chart: per backend combination, two bars, predicted and measured
// milliseconds, on one linear axis. Written by hand (no plotting dependency): a fixed-size SVG with
// a title, a grid of 5 ticks, a legend and each value printed above its bar, so the file reads
// without hovering. A combination that failed (no plan, or a run error) gets no bars and its
// reason in place of the value.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tessera {

struct BenchRow {
  std::vector<std::string> backends;
  std::optional<double> predicted_ms;   // nullopt: no plan, or a cost model without a time unit
  std::optional<double> measured_ms;    // nullopt: not run / failed
  std::string error;                    // why a value is missing
  std::optional<double> rel_error;      // a budgeted plan's verified error (--max-rel-error)
  std::string chosen;                   // the end-to-end choice ("single:onednn"), when one was made
  std::string clock;                    // what measured_ms is: "cpu" time (one compute thread) or "wall"
};

std::string bench_chart_svg(const std::string& title, const std::vector<BenchRow>& rows);

}  // namespace tessera
