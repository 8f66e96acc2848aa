// tessera info MODEL [--json]: what a model is made of (inputs, outputs, op histogram, kinds,
// parameters, FLOPs). tessera print MODEL [--json]: the graph as text IR or as tessera JSON.
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/model_options.h"
#include "frontend/json_graph.h"
#include "ir/op_registry.h"
#include "frontend/printer.h"

namespace tessera::cli {
namespace {

// Inputs whose symbolic dimensions the import bound to 1 (no --input-shape for them) carry
// "symbolic": [{"axis", "name", "bound_to"}], so that a script sees which sizes are guesses.
nlohmann::json info_json(const Graph& g, const std::vector<SymbolicInput>& symbolic) {
  using nlohmann::json;
  auto io = [&](const std::vector<ValueId>& ids) {
    json out = json::array();
    for (ValueId v : ids) {
      json entry{{"name", g.value(v).name}, {"dtype", std::string(dtype_name(g.value(v).type.dtype))},
                 {"shape", g.value(v).type.shape}};
      for (const SymbolicInput& in : symbolic) {
        if (in.name != g.value(v).name) continue;
        json dims = json::array();
        for (size_t d = 0; d < in.dims.size(); ++d)
          if (in.symbolic[d]) dims.push_back({{"axis", d}, {"name", in.dims[d]}, {"bound_to", g.value(v).type.shape[d]}});
        entry["symbolic"] = dims;
      }
      out.push_back(entry);
    }
    return out;
  };
  std::map<std::string, int> ops, kinds;
  double flops = 0;
  for (const Node& n : g.nodes) {
    ++ops[n.op];
    ++kinds[std::string(op_kind_name(op_kind(n.op)))];
    flops += node_flops(g, n);
  }
  int constants = 0, shape_only = 0;
  for (const Value& v : g.values) {
    constants += v.is_constant();
    shape_only += v.is_constant() && !v.data;
  }
  return json{{"model", g.source}, {"name", g.name}, {"opset", g.opset}, {"inputs", io(g.inputs)},
              {"outputs", io(g.outputs)}, {"nodes", g.num_nodes()}, {"ops", ops}, {"kinds", kinds},
              {"constants", constants}, {"shape_only_constants", shape_only}, {"parameters", g.parameter_count()},
              {"flops", flops}};
}

void print_info(const nlohmann::json& j) {
  auto io = [](const nlohmann::json& list) {
    std::string s;
    for (const auto& v : list) {
      Shape shape = v["shape"].get<Shape>();
      s += "  " + v["name"].get<std::string>() + ": " + v["dtype"].get<std::string>() + " " + shape_to_string(shape);
      if (v.contains("symbolic")) {
        std::string dims;
        for (const auto& d : v["symbolic"])
          dims += (dims.empty() ? "" : ", ") + d["name"].get<std::string>() + " bound to " + std::to_string(d["bound_to"].get<int64_t>());
        s += "  (symbolic: " + dims + "; bind them with --input-shape " + v["name"].get<std::string>() + "=" +
             shape_to_string(shape) + " and your sizes)";
      }
      s += "\n";
    }
    return s;
  };
  std::cout << "model:      " << j["model"].get<std::string>() << " (opset " << j["opset"] << ")\n"
            << "inputs:\n" << io(j["inputs"]) << "outputs:\n" << io(j["outputs"])
            << "nodes:      " << j["nodes"] << "\n"
            << "parameters: " << j["parameters"] << " (" << j["constants"] << " constants, " << j["shape_only_constants"]
            << " shape-only)\n";
  char gflops[32];
  std::snprintf(gflops, sizeof gflops, "%.3f", j["flops"].get<double>() / 1e9);
  std::cout << "GFLOPs:     " << gflops << "\nkinds:     ";
  for (const auto& [k, n] : j["kinds"].items()) std::cout << " " << k << "=" << n;
  std::cout << "\nops:       ";
  for (const auto& [k, n] : j["ops"].items()) std::cout << " " << k << "=" << n;
  std::cout << "\n";
  if (j.contains("simplified")) {
    SimplifyReport r{j["simplified"]["removed"].get<std::vector<std::string>>(),
                     j["simplified"]["folded"].get<std::vector<std::string>>()};
    if (r.changed()) std::cout << "simplified: " << r.summary() << " (--no-simplify keeps them)\n";
  }
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "summarise a model: inputs, outputs, ops, kinds, parameters, FLOPs");
  auto model = std::make_shared<ModelOptions>();
  auto as_json = std::make_shared<bool>(false);
  model->add_to(*cmd);
  cmd->add_flag("--json", *as_json, "print one JSON object");
  cmd->callback([=] {
    const Graph graph = model->load();
    nlohmann::json j = info_json(graph, model->symbolic);
    const SimplifyReport& simplified = model->simplified;
    j["simplified"] = {{"removed", simplified.removed}, {"folded", simplified.folded}};
    if (*as_json) std::cout << j.dump(2) << "\n";
    else print_info(j);
  });

  auto* print = app.add_subcommand("print", "print a model as text IR, or as tessera JSON with --json");
  auto pmodel = std::make_shared<ModelOptions>();
  auto pjson = std::make_shared<bool>(false);
  pmodel->add_to(*print);
  print->add_flag("--json", *pjson, "tessera.graph JSON (re-imports to an equal graph)");
  print->callback([=] {
    Graph g = pmodel->load();
    if (*pjson) std::cout << graph_to_json(g, 4096).dump(1) << "\n";
    else std::cout << print_graph(g);
  });
}

}  // namespace tessera::cli
