// UTF-8 validity, for names read from files (ONNX strings are not validated by protobuf).
//
// tessera writes names into JSON (plans, `print --json`, cost databases) and JSON holds only valid
// UTF-8, so a model whose names are not valid UTF-8 is refused at import, naming the place.
// printable() in error.h uses the same rule to decide which bytes to escape.
#pragma once

#include <cstddef>
#include <string_view>

namespace tessera {

// Length of the valid UTF-8 sequence of 2-4 bytes starting at text[i] (no overlong form, no
// surrogate, at most U+10FFFF), or 0 if there is none.
size_t utf8_sequence_length(std::string_view text, size_t i);

// Every byte is ASCII or part of a valid multi-byte sequence.
bool is_valid_utf8(std::string_view text);

}  // namespace tessera
