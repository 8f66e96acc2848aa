// Collage's own partition-test graphs (TVM's src/relay/collage tests), all values f32[10,10]:
//   collage_chain:   r0 = Relu(x); a = Abs(r0); r1 = Relu(a); out = Add(a, r1)      (a is a tap)
//   collage_diamond: r0 = Relu(x); r1 = Relu(r0); a = Abs(x); r2 = Relu(a); s = Add(r1, r2);
//                    r3 = Relu(s); out = Abs(r3)
// Node indices follow the order above. data/models/collage_*.json hold the same graphs as files.
#pragma once

#include "support/graph_builder.h"

namespace tessera::testing {

inline Graph collage_chain() {
  GraphBuilder b;
  ValueId r0 = b.op("Relu", "r0", {b.input("x")});
  ValueId a = b.op("Abs", "a", {r0});
  ValueId r1 = b.op("Relu", "r1", {a});
  b.output(b.op("Add", "out", {a, r1}));
  return std::move(b.g);
}

inline Graph collage_diamond() {
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId r0 = b.op("Relu", "r0", {x});
  ValueId r1 = b.op("Relu", "r1", {r0});
  ValueId a = b.op("Abs", "a", {x});
  ValueId r2 = b.op("Relu", "r2", {a});
  ValueId s = b.op("Add", "s", {r1, r2});
  ValueId r3 = b.op("Relu", "r3", {s});
  b.output(b.op("Abs", "out", {r3}));
  return std::move(b.g);
}

}  // namespace tessera::testing
