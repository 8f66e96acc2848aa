// Text that tessera did not write: printable messages, UTF-8 validity, nlohmann's messages.
//
// Names in messages come from models and files from elsewhere. Every line tessera prints about
// them goes through printable() (the CLI's one catch of UserError in src/cli/main.cc, warnings),
// so no message carries a raw newline, a terminal escape or a broken UTF-8 byte into a log:
// control bytes, DEL, C1 controls and bytes that are not valid UTF-8 become \xNN; valid UTF-8
// ("café") stays as it is. Escaping twice changes nothing.
//
// tessera also writes names into JSON (plans, `print --json`, cost databases), and JSON holds only
// valid UTF-8, so importers refuse names that are not (is_valid_utf8); protobuf does not check
// ONNX's strings.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tessera {

// `text` with every byte outside printable ASCII and printable UTF-8 written as \xNN.
std::string printable(std::string_view text);

// Length of the valid UTF-8 sequence of 2-4 bytes starting at text[i] (no overlong form, no
// surrogate, at most U+10FFFF), or 0 if there is none.
size_t utf8_sequence_length(std::string_view text, size_t i);

// Every byte is ASCII or part of a valid multi-byte sequence.
bool is_valid_utf8(std::string_view text);

// An nlohmann::json exception's message without its "[json.exception.out_of_range.406] " prefix.
std::string json_error_text(std::string_view what);

}  // namespace tessera
