// Arms and trial coordinates of the protocol (DESIGN §6): "solo_<dsl>", "<a>2<b>_skill", "p<NN>_r<k>_<arm>".
#pragma once

#include "core/util/result.h"

#include <string>
#include <string_view>
#include <vector>

namespace mkb {

enum class ArmKind {
    Solo,  // an attempt in one DSL with no extra input
    Skill, // an attempt in `dsl` given the skill distilled by the solo attempt in `sourceDsl`
};

struct Arm {
    ArmKind kind = ArmKind::Solo;
    std::string dsl;       // the DSL the attempt writes kernels in (the target, for a skill arm)
    std::string sourceDsl; // skill arms only: the DSL whose solo attempt wrote the skill; empty for solos

    bool isSkill() const { return kind == ArmKind::Skill; }
    /// "solo_triton" or "triton2cuda_skill".
    std::string name() const;

    friend bool operator==(const Arm&, const Arm&) = default;
};

Arm soloArm(std::string dsl);
Arm skillArm(std::string sourceDsl, std::string targetDsl);

/// True for a DSL id usable in arm names: a lowercase letter, then lowercase letters, digits or underscores.
bool isValidDslId(std::string_view id);

/// Parses "solo_<dsl>" or "<a>2<b>_skill"; the error names the text and what a valid arm looks like.
Result<Arm> parseArm(std::string_view text);

/// The four arms of a DSL pair, solos first: solo_a, solo_b, a2b_skill, b2a_skill.
std::vector<Arm> armsForPair(const std::string& dslA, const std::string& dslB);

/// Where one trial sits in a run: problem number, replicate (>= 1) and arm.
struct Coordinate {
    int problemNumber = 0;
    int replicate = 1;
    Arm arm;

    friend bool operator==(const Coordinate&, const Coordinate&) = default;
};

/// "p07_r1_solo_triton"; the problem number takes at least two digits.
std::string formatCoordinate(const Coordinate& coordinate);

/// Parses "p<NN>_r<k>_<arm>"; the error names the text and the part that is wrong.
Result<Coordinate> parseCoordinate(std::string_view text);

} // namespace mkb
