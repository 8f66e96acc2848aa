// Hand-written SVG bar chart for `tessera bench --svg` (see bench_chart.h).
#include "runtime/bench_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tessera {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", x);
  return buf;
}

std::string ms(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, x < 10 ? "%.3g" : "%.1f", x);
  return buf;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : "+") + x;
  return s;
}

}  // namespace

std::string bench_chart_svg(const std::string& title, const std::vector<BenchRow>& rows) {
  const double left = 60, top = 50, plot_h = 260, group_w = 120, bar_w = 40;
  const double width = left + 20 + group_w * static_cast<double>(std::max<size_t>(rows.size(), 1));
  const double height = top + plot_h + 60;
  double vmax = 0;
  for (const BenchRow& r : rows) vmax = std::max({vmax, r.predicted_ms.value_or(0), r.measured_ms.value_or(0)});
  if (vmax <= 0) vmax = 1;
  // A round axis maximum: 1, 2 or 5 times a power of ten.
  double step = std::pow(10.0, std::floor(std::log10(vmax / 5)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (vmax / (step * m) <= 5) { step *= m; break; }
  const double axis_max = step * 5;
  auto y = [&](double v) { return top + plot_h * (1 - v / axis_max); };

  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" + num(height) +
                  "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text x=\"" + num(left) + "\" y=\"20\" font-size=\"14\">" + escape(title) + "</text>\n";
  s += "<rect x=\"" + num(width - 190) + "\" y=\"28\" width=\"10\" height=\"10\" fill=\"#9ecae1\"/><text x=\"" + num(width - 176) +
       "\" y=\"37\">predicted</text>\n";
  s += "<rect x=\"" + num(width - 110) + "\" y=\"28\" width=\"10\" height=\"10\" fill=\"#3182bd\"/><text x=\"" + num(width - 96) +
       "\" y=\"37\">measured</text>\n";
  for (int i = 0; i <= 5; ++i) {
    double v = step * i;
    s += "<line x1=\"" + num(left) + "\" x2=\"" + num(width - 10) + "\" y1=\"" + num(y(v)) + "\" y2=\"" + num(y(v)) +
         "\" stroke=\"#ddd\"/><text x=\"" + num(left - 5) + "\" y=\"" + num(y(v) + 4) + "\" text-anchor=\"end\">" + ms(v) + "</text>\n";
  }
  s += "<text x=\"15\" y=\"" + num(top + plot_h / 2) + "\" transform=\"rotate(-90 15 " + num(top + plot_h / 2) +
       ")\" text-anchor=\"middle\">ms</text>\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const BenchRow& r = rows[i];
    const double x0 = left + 10 + group_w * static_cast<double>(i);
    auto bar = [&](double x, const std::optional<double>& v, const char* fill) {
      if (!v) return;
      s += "<rect x=\"" + num(x) + "\" y=\"" + num(y(*v)) + "\" width=\"" + num(bar_w) + "\" height=\"" + num(top + plot_h - y(*v)) +
           "\" fill=\"" + fill + "\"/><text x=\"" + num(x + bar_w / 2) + "\" y=\"" + num(y(*v) - 3) +
           "\" text-anchor=\"middle\">" + ms(*v) + "</text>\n";
    };
    bar(x0, r.predicted_ms, "#9ecae1");
    bar(x0 + bar_w + 4, r.measured_ms, "#3182bd");
    if (!r.error.empty())
      s += "<text x=\"" + num(x0) + "\" y=\"" + num(top + plot_h - 5) + "\" fill=\"#b00\">" + escape(r.error.substr(0, 18)) + "</text>\n";
    s += "<text x=\"" + num(x0 + bar_w + 2) + "\" y=\"" + num(top + plot_h + 16) + "\" text-anchor=\"middle\">" + escape(join(r.backends)) +
         "</text>\n";
  }
  s += "<line x1=\"" + num(left) + "\" x2=\"" + num(width - 10) + "\" y1=\"" + num(top + plot_h) + "\" y2=\"" + num(top + plot_h) +
       "\" stroke=\"black\"/>\n</svg>\n";
  return s;
}

}  // namespace tessera
