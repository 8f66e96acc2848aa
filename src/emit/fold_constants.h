// Constant folding of what layout conversion leaves: transposed weights become new constants.
//
//   main:  %0 = @f(%x, %w)                  main:  %0 = @f(%x, %w_ohwi)     %w_ohwi = constant
//   f(%x, %w: OIHW) {                  ->   f(%x, %w_ohwi: OHWI) {                  (transposed once)
//     %wt = Transpose(%w, perm=[0,2,3,1])      %0 = onednn.Conv(%xt, %w_ohwi)
//     %0 = onednn.Conv(%xt, %wt) }           }
//
// Two cases, both restricted to one backend's functions:
// - inside a function: a Transpose of a function-local constant becomes a constant;
// - across the call boundary: a parameter read only by one Transpose, and bound to a constant at
//   every call site in main, becomes a parameter of the transposed type; each call site passes a
//   new constant "<weight>_<suffix>" holding the transposed data (made once per weight), and main
//   drops constants no call reads any more.
// Weights stay parameters (functions stay shared between blocks with different weights): that is
// why the fold reaches into main's call sites, the only place the weight values are known.
// Shape-only constants fold to shape-only constants. Nothing else is folded: the point is
// deployment-time weight layout, not general constant propagation.
#pragma once

#include <string>

#include "emit/module.h"

namespace tessera {

Module fold_constants(const Module& module, const std::string& backend);

}  // namespace tessera
