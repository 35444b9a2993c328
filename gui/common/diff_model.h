// The side-by-side diff of two texts as data: aligned rows with line numbers on each side, filler rows where one side
// has no line, and the changed words within changed lines (from core/analysis/linediff's edit script), ready for any
// renderer.
#pragma once

#include <QString>
#include <vector>

namespace mkb::gui {

enum class DiffRowKind {
    Same,     // the line is on both sides, unchanged
    Changed,  // a removed line paired with an inserted line; changed words are marked on both sides
    Removed,  // only on the left; the right side is a filler
    Inserted, // only on the right; the left side is a filler
};

/// A range of characters (QString positions) within one side's line.
struct DiffSpan {
    int start = 0;
    int length = 0;
    bool operator==(const DiffSpan&) const = default;
};

/// One side of a row. lineNumber is 1-based; 0 marks a filler (no line on this side).
struct DiffSide {
    int lineNumber = 0;
    QString text;
    std::vector<DiffSpan> changedWords; // only on Changed rows
    bool isFiller() const { return lineNumber == 0; }
};

struct DiffRow {
    DiffRowKind kind = DiffRowKind::Same;
    DiffSide left;
    DiffSide right;
};

struct SideBySideDiff {
    std::vector<DiffRow> rows;
    /// The first row of every run of non-Same rows, ascending: what next/previous change step through.
    std::vector<int> changeStarts;
    int removedLines = 0;  // left lines not kept (Removed and Changed rows)
    int insertedLines = 0; // right lines not kept (Inserted and Changed rows)
};

/// Splits on '\n' (a '\r' before it is dropped; a final newline adds no empty line).
std::vector<QString> diffLinesOf(const QString& text);

/// Words for the in-line diff: runs of letters/digits/underscores, runs of whitespace, and single other characters.
std::vector<QString> diffWordsOf(const QString& line);

/// Aligns left against right. Within each changed run the i-th removed line pairs with the i-th inserted line
/// (Changed); the surplus becomes Removed or Inserted rows with a filler on the other side.
SideBySideDiff sideBySideDiff(const QString& left, const QString& right);

/// The changed words of one line pair: spans on the left not in the right's common words, and the other way round.
/// Whitespace-only words are never marked; adjacent marked words merge into one span.
void markChangedWords(DiffSide& left, DiffSide& right);

/// The change run at or after row + 1 (next) or before row (previous); -1 when there is none.
int nextChangeRow(const SideBySideDiff& diff, int row);
int previousChangeRow(const SideBySideDiff& diff, int row);

} // namespace mkb::gui
