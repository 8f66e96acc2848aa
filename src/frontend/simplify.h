// Graph simplification at import: what every inference runtime does before placement.
//
// simplify_graph rewrites an imported ONNX graph in place, before any candidate is proposed, so
// the search sees the graph that will run and stays exact on it (no pass depends on a backend or
// a cost). The passes, repeated until none applies:
//
//   no-op removal     Identity, single-output Dropout (inference), a Transpose whose perm is the
//                     identity, a Reshape/Flatten/Squeeze/Unsqueeze whose output shape equals its
//                     input shape, a Pad of zeros on every side (torch's AvgPool2d), and a
//                     Transpose pair that composes to the identity: consumers
//                     read the input instead. torch exports turn shared weights into Identity
//                     nodes, each of which would otherwise become a partition of its own.
//   BN folding        BatchNormalization (inference form, one output) after a Conv or
//                     ConvTranspose whose output feeds nothing else: with s = scale/sqrt(var+eps)
//                     per output channel, W' = W*s and b' = (b - mean)*s + B become new constants
//                     and the convolution writes the BN's output. Constants without data (weights
//                     not on disk) give shape-only folded constants: the random weights a run
//                     seeds them with are as good as the originals.
//   bias folding      Add(conv, c) with a constant c that varies along the channel axis only (how
//                     some exporters write a convolution's bias): c joins the convolution's bias,
//                     which lets a BatchNormalization after the Add fold too.
//   spatial mean      ReduceMean over every spatial axis of an [N, C, ...] f32 value becomes a
//                     GlobalAveragePool (keeping its name), plus a Flatten when keepdims=0: the
//                     backends that run pooling inside their functions take it.
//
// Graph outputs keep their names: a removed node whose output is a graph output hands that name to
// the value it forwarded, unless that value is itself a graph input, constant or output, in which
// case the node stays. Tessera's JSON graphs are not simplified (they describe exactly the graph
// to partition); ONNX import runs this unless ImportOptions::simplify is false (--no-simplify).
#pragma once

#include <string>
#include <vector>

#include "tessera/graph.h"

namespace tessera {

struct SimplifyReport {
  std::vector<std::string> removed;        // names of no-op nodes removed
  std::vector<std::string> folded;         // BatchNormalization and bias Add nodes folded into a convolution
  std::vector<std::string> rewritten;      // ReduceMean nodes made GlobalAveragePool
  bool changed() const { return !removed.empty() || !folded.empty() || !rewritten.empty(); }
  std::string summary() const;             // "32 no-op nodes removed, 3 nodes folded into convolutions"
};

SimplifyReport simplify_graph(Graph& g);

}  // namespace tessera
