// Cost: the price of running a candidate function on a backend, with explicit states.
//
// Terms. A Cost is in one of three states:
//   Value(x)         x seconds (roofline, measure) or model units (mock); x >= 0, never NaN
//   Unknown          nobody has priced it (yet); e.g. a measurement that was skipped
//   Invalid(reason)  the backend cannot build or run it; the reason says why
//
// Before (TVM Collage): Unknown was a NaN double, and `std::tie(cost, covered) <` in a priority
// queue comparator silently broke strict weak ordering. After: a total order that containers can
// rely on:
//   Value(a) < Value(b) iff a < b;  every Value < Unknown < every Invalid;
//   Invalid(r1) < Invalid(r2) iff r1 < r2 (so equal costs compare equal, whatever their history).
// -0.0 is stored as +0.0, so the order is a strong order (equal means interchangeable).
//
// Addition is the contract of a plan's cost: Invalid absorbs everything (the first reason in
// argument order is kept, so a + b and b + a differ only in which reason survives), then Unknown
// absorbs Values, and Values add. Costs are additive and monotonic: x + y >= x for every state,
// which is what lets Dijkstra-style search stop at the first complete plan. A sum may overflow to
// +inf; it can never become NaN because values are never negative.
//
// Not needed for correctness: units. Whether a Value is seconds or model units is the cost
// model's business; mixing models in one sum is the caller's mistake.
#pragma once

#include <compare>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace tessera {

class Cost {
 public:
  enum class State : uint8_t { Value = 0, Unknown = 1, Invalid = 2 };

  // Zero (a Value). Cost{} is the identity of addition.
  Cost() = default;
  // A Value; x must be >= 0 and not NaN (checked: a negative or NaN cost is a bug, not input).
  static Cost value(double x);
  static Cost zero() { return Cost{}; }
  static Cost unknown();
  static Cost invalid(std::string reason);

  State state() const { return state_; }
  bool is_value() const { return state_ == State::Value; }
  bool is_unknown() const { return state_ == State::Unknown; }
  bool is_invalid() const { return state_ == State::Invalid; }
  // The number; only for a Value (checked).
  double seconds() const;       // same as number(); reads better for time-based models
  double number() const;
  // The reason; empty unless Invalid.
  const std::string& reason() const { return reason_; }

  Cost operator+(const Cost& o) const;
  Cost& operator+=(const Cost& o);

  std::strong_ordering operator<=>(const Cost& o) const;
  bool operator==(const Cost& o) const { return (*this <=> o) == 0; }

  // "4.0951" (shortest text that reads back to the same double), "unknown", "invalid(reason)".
  std::string to_string() const;
  // Inverse of to_string; nullopt for anything else.
  static std::optional<Cost> parse(std::string_view text);

 private:
  State state_ = State::Value;
  double value_ = 0.0;
  std::string reason_;
};

std::string_view cost_state_name(Cost::State s);   // "value", "unknown", "invalid"
std::optional<Cost::State> cost_state_from_name(std::string_view name);
std::ostream& operator<<(std::ostream& os, const Cost& c);

}  // namespace tessera
