#include "search/search_problem.h"

#include <algorithm>

#include "search/crossing_accounting.h"
#include "tessera/error.h"

namespace tessera {

void SearchProblem::prepare() {
  TESSERA_CHECK(index != nullptr, "SearchProblem: no index");
  TESSERA_CHECK(costs.size() == candidates.size() && devices.size() == candidates.size(),
                "SearchProblem: candidates, costs and devices differ in length");
  const int n = index->size();
  device_names = devices;
  std::sort(device_names.begin(), device_names.end());
  device_names.erase(std::unique(device_names.begin(), device_names.end()), device_names.end());
  TESSERA_CHECK(device_names.size() <= 8, "SearchProblem: more than 8 devices");
  backend_names.clear();
  for (const Candidate& c : candidates) backend_names.push_back(c.backend);
  std::sort(backend_names.begin(), backend_names.end());
  backend_names.erase(std::unique(backend_names.begin(), backend_names.end()), backend_names.end());
  TESSERA_CHECK(backend_names.size() <= 32, "SearchProblem: more than 32 backends");
  backend_id.assign(candidates.size(), 0);
  for (size_t c = 0; c < candidates.size(); ++c)
    backend_id[c] = static_cast<int>(std::lower_bound(backend_names.begin(), backend_names.end(), candidates[c].backend) -
                                     backend_names.begin());
  prepare_boundaries();
  ext.assign(candidates.size(), IndexSet(n));
  device_id.assign(candidates.size(), 0);
  by_node.assign(static_cast<size_t>(n), {});
  for (size_t c = 0; c < candidates.size(); ++c) {
    const IndexSet& inside = candidates[c].inside();
    IndexSet& e = ext[c];
    inside.for_each([&](int v) {
      for (NodeId p : index->producers(v))
        if (!inside.contains(p)) e.insert(p);
    });
    device_id[c] = static_cast<int>(std::lower_bound(device_names.begin(), device_names.end(), devices[c]) -
                                    device_names.begin());
    if (usable(static_cast<int>(c))) inside.for_each([&](int v) { by_node[size_t(v)].push_back(int(c)); });
  }
  node_backends.assign(static_cast<size_t>(n), 0);
  for (int v = 0; v < n; ++v)
    for (int c : by_node[size_t(v)]) node_backends[size_t(v)] |= 1u << backend_id[size_t(c)];
}

void SearchProblem::prepare_boundaries() {
  boundary_slot.clear();
  boundary_prices.clear();
  has_boundaries = false;
  if ((!boundary_model && !conversion_price) || backend_names.size() < 2) return;
  const Graph& graph = index->graph();
  const auto& readers = index->value_consumers();
  const size_t b = backend_names.size();
  std::vector<Layout> layout(b, Layout::plain);
  for (size_t i = 0; i < b; ++i)
    if (auto it = backend_layouts.find(backend_names[i]); it != backend_layouts.end()) layout[i] = it->second;
  boundary_slot.assign(graph.values.size(), -1);
  bool contract_prices = false;
  for (const Node& node : graph.nodes) {
    for (ValueId v : node.outputs) {
      if (v == kNoValue || readers[size_t(v)].empty()) continue;
      const TensorType& type = graph.value(v).type;
      boundary_slot[size_t(v)] = static_cast<int>(boundary_prices.size() / (b * b));
      for (size_t from = 0; from < b; ++from)
        for (size_t to = 0; to < b; ++to) {
          Cost price = boundary_model ? boundary_model->boundary(type, backend_names[from], backend_names[to]) : Cost::zero();
          contract_prices = contract_prices || price != Cost::zero();
          if (from != to && conversion_price && layout[from] != layout[to] && layout_sensitive(graph.value(v)))
            price += conversion_price(type, layout[from], layout[to]);
          has_boundaries = has_boundaries || price != Cost::zero();
          boundary_prices.push_back(std::move(price));
        }
    }
  }
  handed_mask.assign(b, 0);
  for (size_t to = 0; to < b; ++to)
    for (size_t other = 0; other < b; ++other)
      if (other == to || (!contract_prices && conversion_price && layout[other] == layout[to])) handed_mask[to] |= 1u << other;
  const size_t slots = boundary_prices.size() / (b * b);
  boundary_priced.assign(slots, 0);
  price_class.assign(slots * b, 0);
  for (size_t s = 0; s < slots; ++s) {
    const Cost* block = &boundary_prices[s * b * b];
    for (size_t i = 0; i < b * b; ++i) boundary_priced[s] = boundary_priced[s] || block[i] != Cost::zero();
    for (size_t a = 0; a < b; ++a) {
      size_t rep = a;
      for (size_t r = 0; r < a; ++r)
        if (std::equal(block + r * b, block + r * b + b, block + a * b)) {
          rep = r;
          break;
        }
      price_class[s * b + a] = static_cast<uint8_t>(rep);
    }
  }
}

std::vector<double> node_shares(const SearchProblem& problem, const std::vector<char>& allowed) {
  std::vector<double> share(static_cast<size_t>(problem.num_nodes()), 0.0);
  for (size_t v = 0; v < share.size(); ++v) {
    double best = -1.0;
    for (int c : problem.by_node[v]) {
      if (!allowed.empty() && !allowed[size_t(c)]) continue;
      const double s = problem.costs[size_t(c)].number() / double(problem.candidates[size_t(c)].inside().count());
      if (best < 0 || s < best) best = s;
    }
    share[v] = best > 0 ? best : 0.0;
  }
  return share;
}

SearchResult price_cover(const SearchProblem& problem, std::vector<int> chosen) {
  std::sort(chosen.begin(), chosen.end());
  SearchResult r;
  r.found = true;
  for (int c : chosen) r.total += problem.costs[size_t(c)];
  PlanCrossings crossings = plan_crossings(problem, chosen);
  r.transfer = crossings.transfer;
  r.boundary = crossings.boundary;
  r.total += r.transfer;
  r.total += r.boundary;
  r.chosen = std::move(chosen);
  return r;
}

}  // namespace tessera
