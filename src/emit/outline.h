// Outline with reuse: a Plan's partitions become global functions of a Module (TVM's
// PartitionGraph + OutlineCompilerFunctionsWithExistingGlobalSymbols, with Collage's reuse).
//
//   main(%x) { Conv_0; Relu_1; Conv_2; Relu_3 }        plan: onednn {Conv_0, Relu_1},
//                                                             onednn {Conv_2, Relu_3}
//   ->  main(%x) { %0 = @tvmgen_default_onednn_main_0(%x, %w0)
//                  %1 = @tvmgen_default_onednn_main_0(%0, %w1) }   one function, two calls
//
// Each partition is extracted (extract_function: weights become parameters), and partitions that
// are structurally equal (structural_hash.h: weights count by type), on the same backend and with
// the same Composite structure share one function; each call passes its own weights. The pass
// keeps the Plan's function names ("tvmgen_default_<backend>_main_<k>", equal partitions already
// share one) and makes a fresh name, the next free k, only where a plan gives none or where the
// name is taken by a different function (a second partitioning round). Each chosen candidate's
// composites become inner Composite functions (attributes Composite, PartitionedFromPattern).
//
// Partitions are found in main by node *name* (the Plan's IndexSets index `planned`, the graph the
// plan was made for), so a plan made for a model applies to a module whose main already has
// calls, and a second round can outline what the first left in main. Idempotent: a partition whose
// nodes were all outlined before is skipped, so outline(outline(m, g, p), g, p) == outline(m, g,
// p); one only partly outlined is a UserError. OutlineOptions::backends restricts the round to
// some backends (the others' nodes stay inline in main for a later round).
//
// main stays topologically ordered: calls and remaining nodes are ordered by Kahn's algorithm,
// ties broken by the smallest original node index, which needs the plan's partitions to form a
// DAG (they do: search/ builds acyclic plans); a cycle is an internal error. Cost: one
// extract_function and hash per partition, O(nodes + values) to rebuild main.
#pragma once

#include <string>
#include <vector>

#include "tessera/graph.h"
#include "emit/module.h"
#include "tessera/plan.h"

namespace tessera {

struct OutlineOptions {
  std::vector<std::string> backends;   // outline only these backends' partitions; empty = all
};

Module outline(const Module& module, const Graph& planned, const Plan& plan, const OutlineOptions& options = {});
// Plan -> Module: outline(Module::from_graph(graph), graph, plan).
Module outline(const Graph& graph, const Plan& plan, const OutlineOptions& options = {});

// "Conv_Add_Relu_": TVM's PartitionedFromPattern, the op types of a match in order, each + '_'.
std::string partitioned_from_pattern(const Graph& graph, const std::vector<NodeId>& nodes);

}  // namespace tessera
