#include "search/search_problem.h"

#include <algorithm>

#include "search/transfer_accounting.h"
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
}

SearchResult price_cover(const SearchProblem& problem, std::vector<int> chosen) {
  std::sort(chosen.begin(), chosen.end());
  SearchResult r;
  r.found = true;
  for (int c : chosen) r.total += problem.costs[size_t(c)];
  r.transfer = plan_transfer_cost(problem, chosen);
  r.total += r.transfer;
  r.chosen = std::move(chosen);
  return r;
}

}  // namespace tessera
