// The plan's precision record, written and read for the `tessera.plan` writer and reader
// (src/search/plan_json.cc): "accuracy" (what an accuracy budget decided and verified, on what
// data: PlanAccuracy) and "quantization" (the int8 ranges and bias shifts: PlanQuantization),
// both defined in include/tessera/plan.h. Kept apart from the rest of the plan format because
// they change with the budget's method, not with the search's.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/graph.h"
#include "tessera/plan.h"

namespace tessera {

namespace plan_json {
// obj[key], or UserError(file, "place.key", "missing"); UserError when obj is not an object.
const nlohmann::json& field(const nlohmann::json& obj, const char* key, const std::string& file, const std::string& place);
// field(...) as a string, or UserError(file, "place.key", "expected a string").
std::string read_string(const nlohmann::json& obj, const char* key, const std::string& file, const std::string& place);
}  // namespace plan_json

// ",\n \"accuracy\": {...}" and ",\n \"quantization\": {...}" for the plan's own fields; nothing
// for fields it lacks. Key order and number format fixed here (format_plan_number).
void write_plan_precision(std::ostream& o, const Plan& plan);

// The "accuracy" and "quantization" objects; UserError naming the field for anything malformed.
PlanAccuracy read_plan_accuracy(const nlohmann::json& a, const std::string& file);
PlanQuantization read_plan_quantization(const nlohmann::json& q, const std::string& file, const Graph& graph);

}  // namespace tessera
