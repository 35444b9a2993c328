// A JSON-aware mutation for the fuzz targets whose inputs are JSON texts: one value of the parsed document is replaced
// by a value of another kind (null, a huge, negative or fractional number, a string, a container, a nested copy), one
// member is dropped, or a known key is added, so that type confusions are reached in one step rather than by chance.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace mkbfuzz {

using Json = nlohmann::ordered_json;

/// The walk below the top stops at this depth, so a deeply nested input costs the mutator no stack.
constexpr int kMaxWalkDepth = 64;

inline void collectValues(Json& value, int depth, std::vector<Json*>& values) {
    values.push_back(&value);
    if (depth >= kMaxWalkDepth || !value.is_structured()) {
        return;
    }
    for (Json& child : value) {
        collectValues(child, depth + 1, values);
    }
}

/// A value of some other kind than `old`, chosen by rng; some of them wrap `old` itself.
inline Json otherValue(std::minstd_rand& rng, const Json& old) {
    switch (rng() % 16) {
    case 0:
    case 1:
        return nullptr;
    case 2:
        return rng() % 2 == 0;
    case 3:
        return 1e308;
    case 4:
        return -1;
    case 5:
        return 0.5;
    case 6:
        return std::numeric_limits<std::int64_t>::max();
    case 7:
        return std::numeric_limits<std::uint64_t>::max();
    case 8:
        return -1e308;
    case 9:
        return "";
    case 10:
        return std::string("a\nb\x01\"\\") + char(0);
    case 11:
        return Json::array();
    case 12:
        return Json::object();
    case 13:
        return Json::array({old});
    case 14:
        return Json{{"value", old}};
    default: {
        Json nested = old;
        for (unsigned levels = 1 + rng() % 40; levels > 0; --levels) {
            nested = Json::array({std::move(nested)});
        }
        return nested;
    }
    }
}

/// Mutates one JSON document in place; false when the text is not JSON (the caller then mutates bytes instead).
/// `keys` are field names the reader looks for, added to objects now and then. `oneLine` keeps a JSON Lines entry on
/// one line; otherwise the text is sometimes written indented.
inline bool mutateJsonText(std::string& text, std::minstd_rand& rng, const std::vector<std::string>& keys,
                           bool oneLine = false) {
    Json document = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (document.is_discarded()) {
        return false;
    }
    std::vector<Json*> values;
    collectValues(document, 0, values);
    Json& target = *values[rng() % values.size()];
    const unsigned action = rng() % 10;
    if (action < 6 || !target.is_structured()) {
        target = otherValue(rng, target);
    } else if (action < 8 && !target.empty()) {
        // Drop one member or element: the reader's "field is missing" paths.
        const std::size_t index = rng() % target.size();
        if (target.is_object()) {
            auto it = target.begin();
            std::advance(it, static_cast<std::ptrdiff_t>(index));
            target.erase(it);
        } else {
            target.erase(index);
        }
    } else if (target.is_object() && !keys.empty()) {
        target[keys[rng() % keys.size()]] = otherValue(rng, nullptr);
    } else {
        target = otherValue(rng, target);
    }
    text = document.dump(!oneLine && rng() % 4 == 0 ? 1 : -1, ' ', false, Json::error_handler_t::replace);
    return true;
}

} // namespace mkbfuzz
