// Costs as a person reads them: milliseconds for the models whose costs are seconds.
//
// A Cost holds seconds (roofline, measure) or model units (mock); files keep that number as it is
// (a plan's `cost_unit` names it, docs/formats.md). Everything printed for a person to read, the
// summary, --explain, DOT and SVG labels, shows the same figure in one unit:
//
//   roofline 2.0360518251546225e-07  ->  "0.0002036 ms"
//   mock     24.5706                 ->  "24.5706"
//   Unknown / Invalid                ->  "unknown" / "invalid(reason)", as Cost::to_string
//
// Four significant digits: the models are not more accurate than that.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "tessera/cost.h"

namespace tessera {

// True for the cost models whose values are seconds: every model but mock.
inline bool cost_is_seconds(std::string_view cost_model) { return cost_model.rfind("mock", 0) != 0; }

// "1.234 ms" for a seconds-valued model, "%.6g" model units for mock, else Cost::to_string().
inline std::string display_cost(const Cost& c, std::string_view cost_model) {
  if (!c.is_value()) return c.to_string();
  char buf[48];
  if (cost_is_seconds(cost_model)) std::snprintf(buf, sizeof buf, "%.4g ms", c.number() * 1e3);
  else std::snprintf(buf, sizeof buf, "%.6g", c.number());
  return buf;
}

}  // namespace tessera
