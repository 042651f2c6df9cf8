// JsonObjectFields: a strict, minimal JSON checker for delaylog-dump's --json lines (no JSON
// library in the dependency list). It parses one JSON text per RFC 8259 (UTF-8 only, no raw
// control characters in strings, exact number grammar) and, for a top-level object, returns
// its members: strings decoded, every other value as its JSON text.
//
// Thread-safety: pure function.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace delaybridge::dump {

// nullopt when text is not exactly one valid JSON object (surrounding whitespace allowed).
std::optional<std::map<std::string, std::string>> JsonObjectFields(const std::string& text);

}  // namespace delaybridge::dump
