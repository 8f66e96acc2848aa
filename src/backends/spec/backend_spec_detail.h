// BackendSpecDetail: the part of a BackendSpec (include/tessera/backend_spec.h) that only the
// partitioner and the compilers read: the spec's patterns, dtypes, fusion style, limits and
// boundary layout. Kept out of the public header so that naming backends does not pull in the
// partition rules, patterns and sub-graph types.
#pragma once

#include <vector>

#include "tessera/backend_spec.h"
#include "ir/boundary_layout.h"
#include "partition/dtype_support.h"
#include "partition/partition_rule.h"
#include "partition/sub_graph.h"

namespace tessera {

struct BackendSpecDetail {
  std::vector<CompositeSpec> patterns;      // in file order
  // "dtypes": ["f32", "f16"] or {"*": [...], "Op": [...]}; absent = every dtype (dtype_support.h).
  DTypeSupport dtypes;
  FusionStyle fusion = FusionStyle::None;
  SubGraphConfig limits;                    // defaults 0, 1, false
  // "boundary_layout": how its functions take and give 4-D activations (boundary_layout.h);
  // "plain" by default, "nhwc" for onednn, onednn_bf16 and xnnpack.
  Layout boundary_layout = Layout::plain;
};

}  // namespace tessera
