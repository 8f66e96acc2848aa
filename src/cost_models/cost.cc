// Cost: states, order, addition, text. See include/tessera/cost.h.
#include "tessera/cost.h"

#include <charconv>
#include <cmath>
#include <ostream>

#include "tessera/error.h"

namespace tessera {

Cost Cost::value(double x) {
  TESSERA_CHECK(!std::isnan(x), "Cost::value: NaN");
  TESSERA_CHECK(x >= 0.0, "Cost::value: negative cost " + std::to_string(x));
  Cost c;
  c.value_ = x == 0.0 ? 0.0 : x;   // folds -0.0 into +0.0
  return c;
}

Cost Cost::unknown() {
  Cost c;
  c.state_ = State::Unknown;
  return c;
}

Cost Cost::invalid(std::string reason) {
  Cost c;
  c.state_ = State::Invalid;
  c.reason_ = std::move(reason);
  return c;
}

double Cost::number() const {
  TESSERA_CHECK(is_value(), "Cost::number on a " + std::string(cost_state_name(state_)) + " cost");
  return value_;
}

double Cost::seconds() const { return number(); }

Cost Cost::operator+(const Cost& o) const {
  Cost r = *this;
  r += o;
  return r;
}

Cost& Cost::operator+=(const Cost& o) {
  if (state_ == State::Invalid) return *this;
  if (o.state_ == State::Invalid) return *this = o;
  if (state_ == State::Unknown) return *this;
  if (o.state_ == State::Unknown) return *this = o;
  value_ += o.value_;   // both >= 0: never NaN, at worst +inf
  return *this;
}

std::strong_ordering Cost::operator<=>(const Cost& o) const {
  if (state_ != o.state_) return state_ <=> o.state_;
  switch (state_) {
    case State::Value:
      // Neither is NaN and -0.0 was folded, so < and == decide.
      if (value_ < o.value_) return std::strong_ordering::less;
      if (value_ > o.value_) return std::strong_ordering::greater;
      return std::strong_ordering::equal;
    case State::Unknown:
      return std::strong_ordering::equal;
    case State::Invalid:
      return reason_.compare(o.reason_) <=> 0;
  }
  return std::strong_ordering::equal;
}

std::string Cost::to_string() const {
  switch (state_) {
    case State::Value: {
      char buf[64];
      auto res = std::to_chars(buf, buf + sizeof buf, value_);
      return std::string(buf, res.ptr);
    }
    case State::Unknown:
      return "unknown";
    case State::Invalid:
      return "invalid(" + reason_ + ")";
  }
  return {};
}

std::optional<Cost> Cost::parse(std::string_view text) {
  if (text == "unknown") return unknown();
  constexpr std::string_view kInvalid = "invalid(";
  if (text.starts_with(kInvalid) && text.ends_with(")")) {
    return invalid(std::string(text.substr(kInvalid.size(), text.size() - kInvalid.size() - 1)));
  }
  double x = 0.0;
  auto res = std::from_chars(text.data(), text.data() + text.size(), x);
  if (res.ec != std::errc() || res.ptr != text.data() + text.size()) return std::nullopt;
  if (std::isnan(x) || x < 0.0) return std::nullopt;
  return value(x);
}

std::string_view cost_state_name(Cost::State s) {
  switch (s) {
    case Cost::State::Value: return "value";
    case Cost::State::Unknown: return "unknown";
    case Cost::State::Invalid: return "invalid";
  }
  return "?";
}

std::optional<Cost::State> cost_state_from_name(std::string_view name) {
  if (name == "value") return Cost::State::Value;
  if (name == "unknown") return Cost::State::Unknown;
  if (name == "invalid") return Cost::State::Invalid;
  return std::nullopt;
}

std::ostream& operator<<(std::ostream& os, const Cost& c) { return os << c.to_string(); }

}  // namespace tessera
