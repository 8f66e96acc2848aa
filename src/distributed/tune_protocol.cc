// Encoding and validated decoding of distributed-tune messages (see tune_protocol.h).
#include "distributed/tune_protocol.h"

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

namespace tessera::distributed {

using nlohmann::json;

namespace {

template <class... F>
struct Overload : F... {
  using F::operator()...;
};
template <class... F>
Overload(F...) -> Overload<F...>;

// Field readers: each names the message type and field in its error.
struct Reader {
  const json& j;
  std::string type;

  const json& at(const char* field) const {
    auto it = j.find(field);
    if (it == j.end()) throw ProtocolError("message '" + type + "': missing field '" + field + "'");
    return *it;
  }
  std::string str(const char* field) const {
    const json& v = at(field);
    if (!v.is_string()) throw ProtocolError("message '" + type + "': field '" + field + "' is not a string");
    return v.get<std::string>();
  }
  uint64_t count(const char* field) const {
    const json& v = at(field);
    if (!v.is_number_unsigned())
      throw ProtocolError("message '" + type + "': field '" + field + "' is not a non-negative integer");
    return v.get<uint64_t>();
  }
  int small(const char* field, int lo, int hi) const {
    uint64_t v = count(field);
    if (v < static_cast<uint64_t>(lo) || v > static_cast<uint64_t>(hi))
      throw ProtocolError("message '" + type + "': field '" + field + "' = " + std::to_string(v) + " is out of range");
    return static_cast<int>(v);
  }
  double number(const char* field) const {
    const json& v = at(field);
    if (!v.is_number()) throw ProtocolError("message '" + type + "': field '" + field + "' is not a number");
    return v.get<double>();
  }
};

}  // namespace

const char* type_name(const Message& m) {
  return std::visit(Overload{[](const Hello&) { return "hello"; }, [](const Job&) { return "job"; },
                             [](const Result&) { return "result"; }, [](const Stop&) { return "stop"; },
                             [](const Failure&) { return "failure"; }},
                    m);
}

std::string encode(const Message& m) {
  json j = std::visit(
      Overload{[](const Hello& h) {
                 return json{{"t", "hello"},       {"rank", h.rank},     {"host", h.host},
                             {"machine", h.machine}, {"measure", h.measure}, {"threads", h.threads},
                             {"slots", h.slots},   {"requests", h.requests}, {"digest", h.digest}};
               },
               [](const Job& x) {
                 return json{{"t", "job"}, {"id", x.id}, {"req", x.request}, {"h", x.hash}, {"b", x.backend}};
               },
               [](const Result& r) {
                 json j{{"t", "result"}, {"id", r.id}, {"c", r.entry.cost.to_string()},
                        {"s", r.entry.spread}, {"n", r.entry.samples}};
                 if (r.entry.error) j["e"] = *r.entry.error;   // precision variants' measured error
                 return j;
               },
               [](const Stop& s) { return json{{"t", "stop"}, {"why", s.why}}; },
               [](const Failure& f) { return json{{"t", "failure"}, {"what", f.what}}; }},
      m);
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Message decode(std::string_view text) {
  if (text.size() > kMaxMessageBytes)
    throw ProtocolError("message of " + std::to_string(text.size()) + " bytes is too long");
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw ProtocolError("message is not a JSON object");
  auto t = j.find("t");
  if (t == j.end() || !t->is_string()) throw ProtocolError("message has no type (field 't')");
  Reader r{j, t->get<std::string>()};
  if (r.type == "hello") {
    Hello h;
    h.rank = r.small("rank", 1, 1 << 24);
    h.host = r.str("host");
    h.machine = r.str("machine");
    h.measure = r.str("measure");
    h.threads = r.small("threads", 1, 1 << 16);
    h.slots = r.small("slots", 1, 1 << 16);
    h.requests = r.count("requests");
    h.digest = r.str("digest");
    return h;
  }
  if (r.type == "job") return Job{r.count("id"), r.count("req"), r.str("h"), r.str("b")};
  if (r.type == "result") {
    Result res;
    res.id = r.count("id");
    std::string cost = r.str("c");
    std::optional<Cost> c = Cost::parse(cost);
    if (!c || (c->is_value() && !std::isfinite(c->number()))) throw ProtocolError("message 'result': field 'c' = '" + cost + "' is not a cost");
    double spread = r.number("s");
    if (!(spread >= 0)) throw ProtocolError("message 'result': field 's' is negative");
    const uint64_t samples = r.count("n");
    if (samples > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw ProtocolError("message 'result': field 'n' = " + std::to_string(samples) + " is out of range");
    res.entry = CostEntry{*c, spread, static_cast<int64_t>(samples)};
    if (j.contains("e")) {
      double e = r.number("e");
      if (!(e >= 0)) throw ProtocolError("message 'result': field 'e' is negative");
      res.entry.error = e;
    }
    return res;
  }
  if (r.type == "stop") return Stop{r.str("why")};
  if (r.type == "failure") return Failure{r.str("what")};
  throw ProtocolError("unknown message type '" + r.type + "'");
}

}  // namespace tessera::distributed
