#include "emit/plan_dot.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "search/cost_display.h"
#include "tessera/error.h"

namespace tessera {
namespace {

const char* const kPalette[] = {"#8dd3c7", "#fdb462", "#bebada", "#fb8072", "#80b1d3",
                                "#b3de69", "#fccde5", "#ffffb3", "#bc80bd", "#ccebc5"};

std::string quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

}  // namespace

std::string plan_to_dot(const Graph& g, const Plan& plan, const std::string& model) {
  // Labels are read by people: milliseconds for the time-based cost models (cost_display.h).
  auto cost_text = [&](const Cost& c) { return display_cost(c, plan.cost_model); };
  std::set<std::string> backends;
  for (const Partition& p : plan.partitions) backends.insert(p.backend);
  std::map<std::string, std::string> colour;
  size_t k = 0;
  for (const std::string& b : backends) colour[b] = kPalette[k++ % std::size(kPalette)];

  std::ostringstream os;
  os << "digraph plan {\n  rankdir=TB;\n  node [shape=box, style=filled, fontname=\"Helvetica\", fontsize=10];\n"
     << "  label=" << quote((model.empty() ? plan.model : model) + "  search " + plan.search + ", cost " + plan.cost_model + ", total " +
                            cost_text(plan.total_cost) + ", transfer " + cost_text(plan.transfer_cost) +
                            ", boundary " + cost_text(plan.boundary_cost))
     << "; labelloc=t; fontname=\"Helvetica\";\n";
  for (ValueId v : g.inputs) os << "  " << quote("in:" + g.value(v).name) << " [shape=ellipse, fillcolor=white, label=" << quote(g.value(v).name) << "];\n";
  std::vector<std::string> backend_of(static_cast<size_t>(g.num_nodes()));
  for (size_t i = 0; i < plan.partitions.size(); ++i) {
    const Partition& p = plan.partitions[i];
    os << "  subgraph cluster_" << i << " {\n    style=\"rounded,filled\"; color=" << quote(colour[p.backend])
       << "; fillcolor=\"#f7f7f7\";\n    label=" << quote((p.function.empty() ? "partition " + std::to_string(i) : p.function) + "\n" + p.backend + "  cost " + cost_text(p.cost)) << ";\n";
    p.nodes.for_each([&](int n) {
      backend_of[static_cast<size_t>(n)] = p.backend;
      os << "    " << quote(g.node(n).name) << " [fillcolor=" << quote(colour[p.backend]) << ", label="
         << quote(g.node(n).name + "\n" + g.node(n).op) << "];\n";
    });
    os << "  }\n";
  }
  for (NodeId n = 0; n < g.num_nodes(); ++n)
    if (backend_of[static_cast<size_t>(n)].empty())
      os << "  " << quote(g.node(n).name) << " [fillcolor=white, label=" << quote(g.node(n).name + "\n" + g.node(n).op) << "];\n";
  for (NodeId n = 0; n < g.num_nodes(); ++n)
    for (ValueId v : g.node(n).inputs) {
      if (v == kNoValue) continue;
      const Value& val = g.value(v);
      if (val.kind == ValueKind::Input) os << "  " << quote("in:" + val.name) << " -> " << quote(g.node(n).name) << ";\n";
      else if (val.kind == ValueKind::Intermediate)
        os << "  " << quote(g.node(val.producer).name) << " -> " << quote(g.node(n).name) << ";\n";
    }
  os << "  subgraph cluster_legend {\n    label=\"backends\"; style=rounded;\n";
  std::string prev;
  for (const std::string& b : backends) {
    os << "    " << quote("legend:" + b) << " [label=" << quote(b) << ", fillcolor=" << quote(colour[b]) << "];\n";
    if (!prev.empty()) os << "    " << quote("legend:" + prev) << " -> " << quote("legend:" + b) << " [style=invis];\n";
    prev = b;
  }
  os << "  }\n}\n";
  return os.str();
}

void write_svg(const std::string& dot_text, const std::string& svg_path) {
  if (svg_path.find('\'') != std::string::npos) throw UserError(svg_path, "", "a path with a single quote is not supported");
  const std::string dot_tmp = svg_path + ".dot.tmp", svg_tmp = svg_path + ".tmp";
  {
    std::ofstream out(dot_tmp);
    out << dot_text;
    if (!out) throw UserError(svg_path, "", "cannot write temporary file " + dot_tmp);
  }
  const std::string cmd = "dot -Tsvg -o '" + svg_tmp + "' '" + dot_tmp + "' 2>/dev/null";
  const int rc = std::system(cmd.c_str());
  std::filesystem::remove(dot_tmp);
  if (rc != 0) {
    std::filesystem::remove(svg_tmp);
    throw UserError(svg_path, "", "Graphviz `dot -Tsvg` failed (is graphviz installed? scripts/setup.sh installs it)");
  }
  std::filesystem::rename(svg_tmp, svg_path);
}

}  // namespace tessera
