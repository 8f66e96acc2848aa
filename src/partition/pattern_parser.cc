// The pattern text syntax (docs/design.md): a recursive-descent parser with 1-based columns.
//
//   pattern := '*' | 'const' | ops [ '(' [ pattern { ',' pattern } ] ')' ]
//   ops     := IDENT { '|' IDENT }
//
// Nesting is limited to kMaxDepth levels: the parser, printing and matching all recurse, and a
// fused kernel deeper than that is not a pattern anyone writes (it would be a stack overflow).
#include <cctype>

#include "tessera/error.h"
#include "partition/pattern.h"

namespace tessera {
namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  Parser(std::string_view text, const std::string& file, const std::string& field)
      : text_(text), file_(file), field_(field) {}

  PatternPtr parse() {
    PatternPtr p = pattern();
    skip_blanks();
    if (pos_ < text_.size()) fail("unexpected '" + std::string(1, text_[pos_]) + "' after the pattern");
    if (p->kind() != Pattern::Kind::Op) fail("the outermost pattern must be an op, not '" + p->to_string() + "'", 1);
    return p;
  }

 private:
  [[noreturn]] void fail(const std::string& what, size_t column = 0) const {
    if (column == 0) column = pos_ + 1;
    throw UserError(file_, field_ + ": column " + std::to_string(column), what);
  }

  void skip_blanks() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool take(char c) {
    skip_blanks();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  static bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
  static bool ident_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  }

  std::string ident() {
    skip_blanks();
    if (pos_ >= text_.size()) fail("expected an op name, '*' or 'const', found the end");
    if (!ident_start(text_[pos_]))
      fail("expected an op name, '*' or 'const', found '" + std::string(1, text_[pos_]) + "'");
    size_t start = pos_;
    while (pos_ < text_.size() && ident_char(text_[pos_])) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  PatternPtr pattern() {
    if (take('*')) return Pattern::any();
    std::string first = ident();
    if (first == "const") return Pattern::constant();
    std::vector<std::string> ops{first};
    while (take('|')) {
      std::string alt = ident();
      if (alt == "const") fail("'const' is not an op name", pos_ - alt.size() + 1);
      ops.push_back(alt);
    }
    if (!take('(')) return Pattern::op(std::move(ops), {}, /*any_args=*/true);
    std::vector<PatternPtr> args;
    if (take(')')) return Pattern::op(std::move(ops), std::move(args));
    if (++depth_ > kMaxDepth) fail("patterns nest at most " + std::to_string(kMaxDepth) + " levels deep");
    while (true) {
      args.push_back(pattern());
      if (take(')')) break;
      if (!take(',')) {
        skip_blanks();
        fail(pos_ < text_.size() ? "expected ',' or ')', found '" + std::string(1, text_[pos_]) + "'"
                                 : "expected ',' or ')', found the end");
      }
    }
    --depth_;
    return Pattern::op(std::move(ops), std::move(args));
  }

  std::string_view text_;
  const std::string& file_;
  const std::string& field_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

PatternPtr parse_pattern(std::string_view text, const std::string& file, const std::string& field) {
  return Parser(text, file, field).parse();
}

}  // namespace tessera
