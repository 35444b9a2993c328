// Naming, parsing and enumerating arms and coordinates.
#include "core/vocabulary/arms.h"

#include <cstdio>

namespace mkb {
namespace {

constexpr std::string_view kSoloPrefix = "solo_";
constexpr std::string_view kSkillSuffix = "_skill";

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

/// Reads a run of decimal digits at `position`; returns how many were read (0 if none).
std::size_t readDigits(std::string_view text, std::size_t position, int& value) {
    std::size_t end = position;
    long long parsed = 0;
    while (end < text.size() && isDigit(text[end]) && end - position < 9) {
        parsed = parsed * 10 + (text[end] - '0');
        ++end;
    }
    value = static_cast<int>(parsed);
    return end - position;
}

Error badArm(std::string_view text, std::string_view why) {
    return makeError("bad arm '" + std::string(text) + "': " + std::string(why) +
                     "; expected solo_<dsl> or <source>2<target>_skill, e.g. solo_triton or triton2cuda_skill");
}

Error badCoordinate(std::string_view text, std::string_view why) {
    return makeError("bad coordinate '" + std::string(text) + "': " + std::string(why) +
                     "; expected p<NN>_r<k>_<arm>, e.g. p07_r1_solo_triton");
}

} // namespace

std::string Arm::name() const {
    if (kind == ArmKind::Solo) {
        return std::string(kSoloPrefix) + dsl;
    }
    return sourceDsl + "2" + dsl + std::string(kSkillSuffix);
}

Arm soloArm(std::string dsl) {
    return Arm{ArmKind::Solo, std::move(dsl), {}};
}

Arm skillArm(std::string sourceDsl, std::string targetDsl) {
    return Arm{ArmKind::Skill, std::move(targetDsl), std::move(sourceDsl)};
}

bool isValidDslId(std::string_view id) {
    if (id.empty() || id[0] < 'a' || id[0] > 'z') {
        return false;
    }
    for (char c : id) {
        if (!((c >= 'a' && c <= 'z') || isDigit(c) || c == '_')) {
            return false;
        }
    }
    return true;
}

Result<Arm> parseArm(std::string_view text) {
    if (text.substr(0, kSoloPrefix.size()) == kSoloPrefix) {
        std::string_view dsl = text.substr(kSoloPrefix.size());
        if (!isValidDslId(dsl)) {
            return badArm(text, "'" + std::string(dsl) + "' is not a DSL id (lowercase letters, digits, underscores)");
        }
        return soloArm(std::string(dsl));
    }
    if (text.size() <= kSkillSuffix.size() || text.substr(text.size() - kSkillSuffix.size()) != kSkillSuffix) {
        return badArm(text, "it neither starts with solo_ nor ends with _skill");
    }
    // A DSL id may itself contain a '2' (only after its first letter), so try every split and demand exactly one.
    std::string_view pair = text.substr(0, text.size() - kSkillSuffix.size());
    std::vector<Arm> candidates;
    for (std::size_t split = 0; split < pair.size(); ++split) {
        if (pair[split] != '2') {
            continue;
        }
        std::string_view source = pair.substr(0, split);
        std::string_view target = pair.substr(split + 1);
        if (isValidDslId(source) && isValidDslId(target)) {
            candidates.push_back(skillArm(std::string(source), std::string(target)));
        }
    }
    if (candidates.empty()) {
        return badArm(text, "no '2' separates two DSL ids");
    }
    if (candidates.size() > 1) {
        return badArm(text, "more than one '2' could separate the DSL ids, so the direction is ambiguous");
    }
    if (candidates.front().sourceDsl == candidates.front().dsl) {
        return badArm(text, "a skill arm transfers between two different DSLs");
    }
    return candidates.front();
}

std::vector<Arm> armsForPair(const std::string& dslA, const std::string& dslB) {
    return {soloArm(dslA), soloArm(dslB), skillArm(dslA, dslB), skillArm(dslB, dslA)};
}

std::string formatCoordinate(const Coordinate& coordinate) {
    char prefix[48];
    std::snprintf(prefix, sizeof prefix, "p%02d_r%d_", coordinate.problemNumber, coordinate.replicate);
    return prefix + coordinate.arm.name();
}

Result<Coordinate> parseCoordinate(std::string_view text) {
    Coordinate coordinate;
    if (text.empty() || text[0] != 'p') {
        return badCoordinate(text, "it must start with 'p' and the problem number");
    }
    std::size_t position = 1;
    std::size_t digits = readDigits(text, position, coordinate.problemNumber);
    if (digits < 2 || (position + digits < text.size() && isDigit(text[position + digits]))) {
        return badCoordinate(text, "the problem number must have two digits (p07, not p7)");
    }
    position += digits;
    if (text.substr(position, 2) != "_r") {
        return badCoordinate(text, "the problem number must be followed by '_r' and the replicate");
    }
    position += 2;
    digits = readDigits(text, position, coordinate.replicate);
    if (digits == 0) {
        return badCoordinate(text, "the replicate must be a number");
    }
    if (position + digits < text.size() && isDigit(text[position + digits])) {
        std::size_t end = position;
        while (end < text.size() && isDigit(text[end])) {
            ++end;
        }
        return badCoordinate(text, "the replicate " + std::string(text.substr(position, end - position)) +
                                       " is out of range (1 to 999999999)");
    }
    if (text[position] == '0') {
        return badCoordinate(text, "the replicate starts at 1 and has no leading zero");
    }
    position += digits;
    if (position >= text.size() || text[position] != '_') {
        return badCoordinate(text, "the replicate must be followed by '_' and the arm");
    }
    auto arm = parseArm(text.substr(position + 1));
    if (!arm) {
        return badCoordinate(text, arm.error().message);
    }
    coordinate.arm = std::move(arm).value();
    return coordinate;
}

} // namespace mkb
