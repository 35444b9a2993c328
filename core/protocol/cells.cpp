// Building cells and naming their three trials.
#include "core/protocol/cells.h"

namespace mkb {

std::vector<Direction> directionsForPair(const std::string& dslA, const std::string& dslB) {
    return {Direction{dslA, dslB}, Direction{dslB, dslA}};
}

Coordinate Cell::source() const {
    return Coordinate{problemNumber, replicate, soloArm(direction.sourceDsl)};
}

Coordinate Cell::base() const {
    return Coordinate{problemNumber, replicate, soloArm(direction.targetDsl)};
}

Coordinate Cell::skill() const {
    return Coordinate{problemNumber, replicate, skillArm(direction.sourceDsl, direction.targetDsl)};
}

std::vector<Cell> cellsFor(const std::vector<int>& problemNumbers, const std::string& dslA, const std::string& dslB,
                           int replicates) {
    std::vector<Cell> cells;
    for (int number : problemNumbers) {
        for (const Direction& direction : directionsForPair(dslA, dslB)) {
            for (int replicate = 1; replicate <= replicates; ++replicate) {
                cells.push_back(Cell{number, direction, replicate});
            }
        }
    }
    return cells;
}

Result<Cell> cellOfSkill(const Coordinate& skill) {
    if (!skill.arm.isSkill()) {
        return makeError("coordinate '" + formatCoordinate(skill) +
                         "' is a solo arm, which belongs to a cell in each direction; pass a skill arm");
    }
    return Cell{skill.problemNumber, Direction{skill.arm.sourceDsl, skill.arm.dsl}, skill.replicate};
}

} // namespace mkb
