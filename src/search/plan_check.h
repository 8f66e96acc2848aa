// Plan validity: the four properties every plan tessera writes must have, checked
// independently of how the plan was found, for tests and for consumers of plan files.
//
//   covering   every node in exactly one partition; each partition the union of its candidates
//   convex     every partition and every chosen candidate is convex and non-empty
//   supported  the partition's backend supports every op inside (BackendSpec::supports)
//   acyclic    the partition DAG has no cycle (partition_dag.h)
//
// Returns the first violation in words ("node 'Relu_3' is in no partition"), or nullopt.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessera/backend_spec.h"
#include "partition/dataflow_index.h"
#include "tessera/plan.h"

namespace tessera {

std::optional<std::string> check_plan(const Plan& plan, const DataflowIndex& index,
                                      const std::vector<BackendSpec>& backends);

}  // namespace tessera
