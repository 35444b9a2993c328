// A line diff (dtl's shortest edit script, as in the diff view): the edit script over ids, the rows of a line diff
// and the changed-line share of an edit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mkb::analysis {

enum class LineChange { Same, Removed, Inserted };

/// One row of an edit script; line numbers are 1-based and 0 on the side the row does not touch.
struct DiffRow {
    LineChange change = LineChange::Same;
    std::size_t beforeLine = 0;
    std::size_t afterLine = 0;
    std::string text;
};

struct LineDiffStats {
    std::size_t linesBefore = 0;
    std::size_t linesAfter = 0;
    std::size_t common = 0; // length of the longest common subsequence of lines
    std::size_t removed = 0;
    std::size_t inserted = 0;
    /// (removed + inserted) / (linesBefore + linesAfter) = 1 − 2·common / (linesBefore + linesAfter); 0 when both are
    /// empty. 0 = identical, 1 = no line in common.
    double changedShare = 0;
};

/// Splits on '\n', dropping one trailing empty line and a '\r' before each '\n'.
std::vector<std::string> splitLines(std::string_view text);

/// One step of a shortest edit script; indices are 1-based and 0 on the side the step does not touch.
struct EditStep {
    LineChange change = LineChange::Same;
    std::size_t beforeIndex = 0;
    std::size_t afterIndex = 0;
};

/// The shortest edit script between two sequences of ids (equal elements carry equal ids), in the engine's order:
/// the one engine behind diffLines and the workbench's line and word diffs, which intern their own elements.
std::vector<EditStep> editScript(const std::vector<std::uint32_t>& before, const std::vector<std::uint32_t>& after);

/// A minimal edit script (removals before insertions within a changed run).
std::vector<DiffRow> diffLines(const std::vector<std::string>& before, const std::vector<std::string>& after);

/// Counts of the minimal edit between two texts, line by line; memory linear in the two sides.
LineDiffStats lineDiffStats(std::string_view before, std::string_view after);

} // namespace mkb::analysis
