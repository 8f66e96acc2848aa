// Outline with reuse (see outline.h).
#include "emit/outline.h"

#include <algorithm>
#include <queue>
#include <set>
#include <unordered_map>

#include "partition/dataflow_index.h"
#include "tessera/error.h"
#include "ir/structural_hash.h"
#include "partition/sub_graph.h"

namespace tessera {
namespace {

// One call to place in main: the partition it replaces and the function it calls.
struct Group {
  IndexSet inside;                       // over the old main
  std::string symbol, backend;
  std::vector<ValueId> args, results;    // old main's values
  std::vector<std::string> names;        // model node names
};

// Composite structure as (name, body positions): part of a function's identity.
using CompositeKey = std::vector<std::pair<std::string, std::vector<int>>>;

CompositeKey composite_key(const Function& fn) {
  std::unordered_map<std::string, int> pos;
  for (NodeId i = 0; i < fn.body.num_nodes(); ++i) pos[fn.body.node(i).name] = i;
  CompositeKey key;
  for (const CompositeFunction& c : fn.composites) {
    std::vector<int> at;
    for (const std::string& n : c.nodes) at.push_back(pos.count(n) ? pos[n] : -1);
    key.emplace_back(c.name(), std::move(at));
  }
  return key;
}

int main_suffix(const std::string& symbol) {
  size_t at = symbol.rfind("_main_");
  if (at == std::string::npos) return -1;
  try {
    return std::stoi(symbol.substr(at + 6));
  } catch (...) {
    return -1;
  }
}

std::string fresh_name(const Module& m, const std::string& backend) {
  std::set<int> used;
  for (const auto& [symbol, fn] : m.functions) used.insert(main_suffix(symbol));
  int k = 0;
  while (used.count(k)) ++k;
  return "tvmgen_default_" + backend + "_main_" + std::to_string(k);
}

class Outliner {
 public:
  Outliner(const Module& in, const Graph& planned, const Plan& plan) : in_(in), planned_(planned), plan_(plan), out_(in) {
    for (NodeId i = 0; i < in.main.num_nodes(); ++i) by_name_[in.main.node(i).name] = i;
    for (const auto& [call, names] : in.outlined_from) done_.insert(names.begin(), names.end());
    for (const auto& [symbol, fn] : in.functions)
      if (!fn.is_extern()) by_hash_[structural_hash(fn.body)].push_back(symbol);
    group_of_.assign(static_cast<size_t>(in.main.num_nodes()), -1);
  }

  void add(const Partition& p, const DataflowIndex& index) {
    const Graph& main = in_.main;
    const std::string where = "partition " + std::to_string(&p - plan_.partitions.data()) + " (" + p.backend + ")";
    IndexSet inside(main.num_nodes());
    std::vector<std::string> names;
    int outlined_before = 0;
    p.nodes.for_each([&](int i) {
      const std::string& name = planned_.node(i).name;
      names.push_back(name);
      auto it = by_name_.find(name);
      if (it != by_name_.end()) inside.insert(it->second);
      else if (done_.count(name)) ++outlined_before;
      else throw UserError(plan_.model, where, "node '" + name + "' is not in the module's main");
    });
    if (inside.empty()) return;   // outlined by an earlier round: nothing to do (idempotence)
    if (outlined_before)
      throw UserError(plan_.model, where, "partly outlined already; re-partition what main still holds");
    inside.for_each([&](int i) {
      if (group_of_[static_cast<size_t>(i)] >= 0)
        throw UserError(plan_.model, where, "node '" + main.node(i).name + "' is in two partitions");
      if (in_.is_call(main.node(i)))
        throw UserError(plan_.model, where, "'" + main.node(i).name + "' is a call; calls are not outlined again");
    });

    SubGraph sub(index, inside);
    Function fn;
    fn.body = extract_function(main, sub);
    for (const ChosenCandidate& c : p.candidates)
      for (const Composite& comp : c.composites) {
        CompositeFunction cf;
        std::vector<NodeId> members;
        comp.inside.for_each([&](int i) {
          cf.nodes.push_back(planned_.node(i).name);
          members.push_back(by_name_.at(planned_.node(i).name));
        });
        cf.attrs[attr::kComposite] = comp.name;
        cf.attrs[attr::kPartitionedFromPattern] = partitioned_from_pattern(main, members);
        fn.composites.push_back(std::move(cf));
      }
    std::sort(fn.composites.begin(), fn.composites.end(),
              [&](const CompositeFunction& a, const CompositeFunction& b) { return by_name_[a.nodes[0]] < by_name_[b.nodes[0]]; });

    Group g{inside, reuse_or_add(std::move(fn), p.backend, p.function), p.backend,
            function_arguments(main, sub), sub.outputs(), std::move(names)};
    int id = static_cast<int>(groups_.size());
    inside.for_each([&](int i) { group_of_[static_cast<size_t>(i)] = id; });
    groups_.push_back(std::move(g));
  }

  Module finish() {
    if (groups_.empty()) return out_;
    rebuild_main();
    return std::move(out_);
  }

 private:
  std::string reuse_or_add(Function fn, const std::string& backend, const std::string& wanted) {
    uint64_t h = structural_hash(fn.body);
    CompositeKey key = composite_key(fn);
    for (const std::string& symbol : by_hash_[h]) {
      const Function& f = out_.functions.at(symbol);
      if (f.backend() == backend && structurally_equal(f.body, fn.body) && composite_key(f) == key) return symbol;
    }
    std::string symbol = wanted.empty() || out_.functions.count(wanted) ? fresh_name(out_, backend) : wanted;
    fn.symbol = symbol;
    fn.body.name = symbol;
    fn.attrs = {{attr::kCompiler, backend}, {attr::kPrimitive, "1"}, {attr::kGlobalSymbol, symbol}};
    out_.functions.emplace(symbol, std::move(fn));
    by_hash_[h].push_back(symbol);
    return symbol;
  }

  // main again, with each group replaced by one call; Kahn's order, ties by first node index.
  void rebuild_main() {
    const Graph& old = in_.main;
    // Items: group g is item g; node n outside groups is item G + n.
    const int G = static_cast<int>(groups_.size());
    auto item_of = [&](NodeId n) { return group_of_[static_cast<size_t>(n)] >= 0 ? group_of_[static_cast<size_t>(n)] : G + n; };
    auto inputs_of = [&](int item) -> const std::vector<ValueId>& {
      return item < G ? groups_[static_cast<size_t>(item)].args : old.node(item - G).inputs;
    };
    auto key_of = [&](int item) { return item < G ? groups_[static_cast<size_t>(item)].inside.first() : item - G; };
    std::vector<int> items;
    for (int g = 0; g < G; ++g) items.push_back(g);
    for (NodeId n = 0; n < old.num_nodes(); ++n)
      if (group_of_[static_cast<size_t>(n)] < 0) items.push_back(G + n);
    std::unordered_map<int, std::vector<int>> users;
    std::unordered_map<int, int> pending;
    for (int item : items) {
      std::set<int> deps;
      for (ValueId v : inputs_of(item))
        if (v != kNoValue && old.value(v).producer != kNoNode) deps.insert(item_of(old.value(v).producer));
      deps.erase(item);
      pending[item] = static_cast<int>(deps.size());
      for (int d : deps) users[d].push_back(item);
    }
    using Entry = std::pair<int, int>;   // (key, item)
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
    for (int item : items)
      if (pending[item] == 0) ready.emplace(key_of(item), item);
    std::vector<int> order;
    while (!ready.empty()) {
      int item = ready.top().second;
      ready.pop();
      order.push_back(item);
      for (int u : users[item])
        if (--pending[u] == 0) ready.emplace(key_of(u), u);
    }
    TESSERA_CHECK(order.size() == items.size(), "outline: the plan's partitions form a cycle");

    Graph main;
    main.name = old.name;
    main.source = old.source;
    main.opset = old.opset;
    std::vector<ValueId> remap(old.values.size(), kNoValue);
    for (ValueId v : old.inputs) {
      remap[static_cast<size_t>(v)] = main.add_value(old.value(v));
      main.inputs.push_back(remap[static_cast<size_t>(v)]);
    }
    std::vector<bool> used(old.values.size(), false);
    for (int item : items)
      for (ValueId v : inputs_of(item))
        if (v != kNoValue) used[static_cast<size_t>(v)] = true;
    for (ValueId v : old.outputs) used[static_cast<size_t>(v)] = true;
    for (ValueId v = 0; v < static_cast<ValueId>(old.values.size()); ++v)
      if (used[static_cast<size_t>(v)] && old.value(v).is_constant()) remap[static_cast<size_t>(v)] = main.add_value(old.value(v));

    std::map<std::string, int> uses;
    for (const Node& n : old.nodes)
      if (const Function* f = in_.callee(n)) ++uses[f->symbol];
    for (int item : order) {
      Node node;
      std::vector<ValueId> outs;
      if (item < G) {
        const Group& g = groups_[static_cast<size_t>(item)];
        node.op = g.symbol;
        node.domain = g.backend;
        node.name = g.symbol + "_call" + std::to_string(uses[g.symbol]++);
        node.inputs = g.args;
        outs = g.results;
        out_.outlined_from[node.name] = g.names;
      } else {
        node = old.node(item - G);
        outs = node.outputs;
      }
      for (ValueId& v : node.inputs)
        if (v != kNoValue) v = remap[static_cast<size_t>(v)];
      node.outputs.clear();
      for (ValueId v : outs) {
        Value val = old.value(v);
        val.producer = kNoNode;
        remap[static_cast<size_t>(v)] = main.add_value(std::move(val));
        node.outputs.push_back(remap[static_cast<size_t>(v)]);
      }
      main.add_node(std::move(node));
    }
    for (ValueId v : old.outputs) main.outputs.push_back(remap[static_cast<size_t>(v)]);
    out_.main = std::move(main);
  }

  const Module& in_;
  const Graph& planned_;
  const Plan& plan_;
  Module out_;
  std::unordered_map<std::string, NodeId> by_name_;
  std::set<std::string> done_;
  std::map<uint64_t, std::vector<std::string>> by_hash_;
  std::vector<int> group_of_;
  std::vector<Group> groups_;
};

}  // namespace

std::string partitioned_from_pattern(const Graph& graph, const std::vector<NodeId>& nodes) {
  std::string s;
  for (NodeId n : nodes) s += graph.node(n).op + "_";
  return s;
}

Module outline(const Module& module, const Graph& planned, const Plan& plan, const OutlineOptions& options) {
  DataflowIndex index(module.main);
  Outliner outliner(module, planned, plan);
  for (const Partition& p : plan.partitions) {
    const auto& only = options.backends;
    if (only.empty() || std::find(only.begin(), only.end(), p.backend) != only.end()) outliner.add(p, index);
  }
  return outliner.finish();
}

Module outline(const Graph& graph, const Plan& plan, const OutlineOptions& options) {
  return outline(Module::from_graph(graph), graph, plan, options);
}

}  // namespace tessera
