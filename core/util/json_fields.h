// Optional fields of a parsed JSON object (a report or a reply read back): the value when the key is there with the
// right type, else a fallback. For nlohmann::json and nlohmann::ordered_json alike.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mkb {

/// object[key] when it is a string, else `fallback`.
template <typename Json>
std::string jsonText(const Json& object, const char* key, const std::string& fallback = "") {
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->template get<std::string>() : fallback;
}

/// object[key] when it is a number, else none.
template <typename Json>
std::optional<double> jsonNumber(const Json& object, const char* key) {
    auto it = object.find(key);
    return it != object.end() && it->is_number() ? std::optional<double>(it->template get<double>()) : std::nullopt;
}

/// object[key] when it is a boolean, else none.
template <typename Json>
std::optional<bool> jsonFlag(const Json& object, const char* key) {
    auto it = object.find(key);
    return it != object.end() && it->is_boolean() ? std::optional<bool>(it->template get<bool>()) : std::nullopt;
}

/// object[key] when it is a whole number, else none.
template <typename Json>
std::optional<int> jsonWhole(const Json& object, const char* key) {
    auto it = object.find(key);
    return it != object.end() && it->is_number_integer() ? std::optional<int>(it->template get<int>()) : std::nullopt;
}

/// The strings of the array object[key], in order (other items skipped); empty when it is not an array.
template <typename Json>
std::vector<std::string> jsonTexts(const Json& object, const char* key) {
    std::vector<std::string> texts;
    if (auto it = object.find(key); it != object.end() && it->is_array()) {
        for (const auto& item : *it) {
            if (item.is_string()) {
                texts.push_back(item.template get<std::string>());
            }
        }
    }
    return texts;
}

} // namespace mkb
