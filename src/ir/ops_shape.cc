// Injective (I) ops: pure data movement, no FLOPs; their cost is the bytes they move.
#include "ir/op_table.h"

namespace tessera::detail {

void register_shape_ops(OpTable& t) {
  for (const char* op : {"Concat", "Reshape", "Transpose", "Slice", "Flatten", "Squeeze", "Unsqueeze", "Split",
                         "Gather", "GatherElements", "Pad", "Expand", "Tile", "Shape", "Size", "ConstantOfShape",
                         "Range", "Resize", "Upsample", "DepthToSpace", "SpaceToDepth"})
    t.add(op, OpKind::Injective);
}

}  // namespace tessera::detail
