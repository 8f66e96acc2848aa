// Layout conversion: a backend's functions compute in NHWC with OHWI weights, behind transposes at
// the function boundary, so callers (main, other backends) still see NCHW (TVM's ConvertLayout).
//
//   fn(%x: NCHW, %w: OIHW) {                 fn(%x: NCHW, %w: OIHW) {
//     %0 = Conv(%x, %w)                ->      %xt = Transpose(%x, perm=[0,2,3,1])      boundary in
//     %1 = Relu(%0)                            %wt = Transpose(%w, perm=[0,2,3,1])      weight (folds)
//     return %1                                %0 = onednn.Conv(%xt, %wt) {data_layout="NHWC", ...}
//   }                                          %1 = Relu(%0)                            stays NHWC
//                                              %y = Transpose(%1, perm=[0,3,1,2])       boundary out
//                                              return %y }
//
// Propagation is one forward sweep: a value has an NCHW and/or NHWC form, each made on demand by
// one memoised Transpose. Conv (4-D, default domain) becomes the backend's own NHWC Conv (domain =
// backend, attributes data_layout/kernel_layout); unary elementwise ops and same-shape 4-D
// binary broadcast ops follow their operand's layout, so a Conv+Relu+Conv+Add chain has transposes
// only at its edges; anything else reads NCHW. What the pass leaves on weights (Transpose of a
// parameter or constant) is removed by fold_constants (fold_constants.h). A function without a
// 4-D Conv is returned unchanged. Names: converted nodes keep theirs (Composites still match);
// caller-visible values keep theirs; new values get "_nhwc"/"_ohwi" suffixes.
#pragma once

#include <string>

#include "tessera/graph.h"
#include "emit/module.h"

namespace tessera {

// The function-level rewrite; `domain` is the backend name the converted Convs belong to.
Graph convert_layout_nhwc(const Graph& fn, const std::string& domain);
// The per-backend pass: every non-extern function of `backend`; main and others untouched.
Module convert_layout(const Module& module, const std::string& backend);

}  // namespace tessera
