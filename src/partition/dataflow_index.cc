// DataflowIndex: producers/consumers per node and reachability bitsets, built once.
#include "partition/dataflow_index.h"

#include <algorithm>

#include "tessera/error.h"

namespace tessera {

DataflowIndex::DataflowIndex(const Graph& graph) : graph_(&graph) {
  const int n = graph.num_nodes();
  const size_t un = static_cast<size_t>(n);
  value_consumers_ = graph.consumers();
  producers_.assign(un, {});
  consumers_.assign(un, {});
  feeds_output_.assign(un, false);
  kinds_.resize(un);

  for (NodeId i = 0; i < n; ++i) {
    const Node& node = graph.node(i);
    kinds_[static_cast<size_t>(i)] = op_kind(node.op);
    auto& prods = producers_[static_cast<size_t>(i)];
    for (ValueId v : node.inputs) {
      if (v == kNoValue) continue;
      NodeId p = graph.value(v).producer;
      if (p == kNoNode) continue;
      TESSERA_CHECK(p < i, "DataflowIndex: nodes are not in topological order");
      prods.push_back(p);
    }
    std::sort(prods.begin(), prods.end());
    prods.erase(std::unique(prods.begin(), prods.end()), prods.end());
    for (NodeId p : prods) consumers_[static_cast<size_t>(p)].push_back(i);   // ascending i
    for (ValueId v : node.outputs)
      if (graph.is_output(v)) feeds_output_[static_cast<size_t>(i)] = true;
  }

  producer_set_.assign(un, IndexSet(n));
  consumer_set_.assign(un, IndexSet(n));
  downstream_.assign(un, IndexSet(n));
  upstream_.assign(un, IndexSet(n));
  for (NodeId i = 0; i < n; ++i) {
    for (NodeId p : producers_[static_cast<size_t>(i)]) producer_set_[static_cast<size_t>(i)].insert(p);
    for (NodeId c : consumers_[static_cast<size_t>(i)]) consumer_set_[static_cast<size_t>(i)].insert(c);
  }
  // Reverse sweep: a consumer's downstream set is final before its producers read it.
  for (NodeId i = n - 1; i >= 0; --i) {
    IndexSet& down = downstream_[static_cast<size_t>(i)];
    for (NodeId c : consumers_[static_cast<size_t>(i)]) {
      down.insert(c);
      down |= downstream_[static_cast<size_t>(c)];
    }
  }
  for (NodeId i = 0; i < n; ++i) {
    IndexSet& up = upstream_[static_cast<size_t>(i)];
    for (NodeId p : producers_[static_cast<size_t>(i)]) {
      up.insert(p);
      up |= upstream_[static_cast<size_t>(p)];
    }
  }
}

}  // namespace tessera
