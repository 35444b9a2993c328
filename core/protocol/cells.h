// Cells of the protocol (DESIGN §6): one problem, one transfer direction, one replicate, and its three arms.
#pragma once

#include "core/vocabulary/arms.h"

#include <string>
#include <vector>

namespace mkb {

/// An ordered DSL pair: knowledge moves from `sourceDsl` to `targetDsl`.
struct Direction {
    std::string sourceDsl;
    std::string targetDsl;

    /// "triton2cuda".
    std::string name() const { return sourceDsl + "2" + targetDsl; }

    friend bool operator==(const Direction&, const Direction&) = default;
};

/// Both directions of a DSL pair: a→b, then b→a.
std::vector<Direction> directionsForPair(const std::string& dslA, const std::string& dslB);

/// (problem, direction, replicate). Resolved when its source, base and skill trials all hold a verdict.
struct Cell {
    int problemNumber = 0;
    Direction direction;
    int replicate = 1;

    /// The solo attempt in the source DSL: it writes the skill.
    Coordinate source() const;
    /// The solo attempt in the target DSL: what the skill attempt is compared against.
    Coordinate base() const;
    /// The skill-conditioned attempt in the target DSL.
    Coordinate skill() const;

    friend bool operator==(const Cell&, const Cell&) = default;
};

/// Every cell of the given problems × both directions × replicates 1..replicates, in that nesting order.
std::vector<Cell> cellsFor(const std::vector<int>& problemNumbers, const std::string& dslA, const std::string& dslB,
                           int replicates);

/// The cell a skill coordinate belongs to; solo coordinates belong to two cells (one per direction), so this
/// answers only for skill arms.
Result<Cell> cellOfSkill(const Coordinate& skill);

} // namespace mkb
