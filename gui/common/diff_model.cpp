// Side-by-side diff rows from core/analysis/linediff's edit script (dtl, the one engine), line level first, then word
// level within paired lines.
#include "gui/common/diff_model.h"

#include "core/analysis/linediff.h"

#include <QHash>
#include <QStringList>

#include <algorithm>
#include <cstdint>
#include <string>

namespace mkb::gui {
namespace {

using Ids = std::vector<std::uint32_t>;

/// Both sides as ids for analysis's edit script: equal texts (QString equality, UTF-16 units) get equal ids.
std::pair<Ids, Ids> internBoth(const std::vector<QString>& left, const std::vector<QString>& right) {
    QHash<QString, std::uint32_t> ids;
    auto idsOf = [&ids](const std::vector<QString>& texts) {
        Ids out;
        out.reserve(texts.size());
        for (const QString& text : texts) {
            auto found = ids.constFind(text);
            if (found == ids.constEnd()) {
                found = ids.insert(text, std::uint32_t(ids.size()));
            }
            out.push_back(found.value());
        }
        return out;
    };
    Ids leftIds = idsOf(left);
    return {std::move(leftIds), idsOf(right)};
}

struct EditStep {
    enum Kind { Common, Delete, Add } kind;
    int leftIndex;  // 0-based, valid for Common and Delete
    int rightIndex; // 0-based, valid for Common and Add
};

/// The shortest edit script of core/analysis/linediff (the one diff engine), with 0-based indices.
std::vector<EditStep> editScript(const std::vector<QString>& left, const std::vector<QString>& right) {
    const auto [leftIds, rightIds] = internBoth(left, right);
    std::vector<EditStep> steps;
    for (const analysis::EditStep& step : analysis::editScript(leftIds, rightIds)) {
        switch (step.change) {
        case analysis::LineChange::Same:
            steps.push_back({EditStep::Common, int(step.beforeIndex) - 1, int(step.afterIndex) - 1});
            break;
        case analysis::LineChange::Removed:
            steps.push_back({EditStep::Delete, int(step.beforeIndex) - 1, -1});
            break;
        case analysis::LineChange::Inserted:
            steps.push_back({EditStep::Add, -1, int(step.afterIndex) - 1});
            break;
        }
    }
    return steps;
}

bool isSpaceWord(const QString& word) {
    return std::all_of(word.begin(), word.end(), [](QChar c) { return c.isSpace(); });
}

void addSpan(std::vector<DiffSpan>& spans, int start, int length) {
    if (!spans.empty() && spans.back().start + spans.back().length == start) {
        spans.back().length += length;
        return;
    }
    spans.push_back({start, length});
}

// Merges spans separated only by whitespace, so "a b" changed to "x y" is one span, not two.
std::vector<DiffSpan> bridgeSpaces(const std::vector<DiffSpan>& spans, const QString& text) {
    std::vector<DiffSpan> merged;
    for (const DiffSpan& span : spans) {
        if (!merged.empty()) {
            const int gapStart = merged.back().start + merged.back().length;
            if (isSpaceWord(text.mid(gapStart, span.start - gapStart))) {
                merged.back().length = span.start + span.length - merged.back().start;
                continue;
            }
        }
        merged.push_back(span);
    }
    return merged;
}

} // namespace

std::vector<QString> diffLinesOf(const QString& text) {
    std::vector<QString> lines;
    if (text.isEmpty()) {
        return lines;
    }
    const QStringList parts = text.split(QLatin1Char('\n'));
    for (int i = 0; i < parts.size(); ++i) {
        if (i == parts.size() - 1 && parts[i].isEmpty()) {
            break; // the final newline
        }
        QString line = parts[i];
        if (line.endsWith(QLatin1Char('\r'))) {
            line.chop(1);
        }
        lines.push_back(line);
    }
    return lines;
}

std::vector<QString> diffWordsOf(const QString& line) {
    std::vector<QString> words;
    auto classOf = [](QChar c) { return c.isLetterOrNumber() || c == QLatin1Char('_') ? 1 : c.isSpace() ? 2 : 0; };
    int start = 0;
    while (start < line.size()) {
        const int kind = classOf(line[start]);
        int end = start + 1;
        if (kind != 0) {
            while (end < line.size() && classOf(line[end]) == kind) {
                ++end;
            }
        }
        words.push_back(line.mid(start, end - start));
        start = end;
    }
    return words;
}

void markChangedWords(DiffSide& left, DiffSide& right) {
    const std::vector<QString> leftWords = diffWordsOf(left.text);
    const std::vector<QString> rightWords = diffWordsOf(right.text);
    std::vector<int> leftStarts, rightStarts;
    int position = 0;
    for (const QString& word : leftWords) {
        leftStarts.push_back(position);
        position += int(word.size());
    }
    position = 0;
    for (const QString& word : rightWords) {
        rightStarts.push_back(position);
        position += int(word.size());
    }
    std::vector<DiffSpan> leftSpans, rightSpans;
    for (const EditStep& step : editScript(leftWords, rightWords)) {
        if (step.kind == EditStep::Delete && !isSpaceWord(leftWords[size_t(step.leftIndex)])) {
            addSpan(leftSpans, leftStarts[size_t(step.leftIndex)], int(leftWords[size_t(step.leftIndex)].size()));
        } else if (step.kind == EditStep::Add && !isSpaceWord(rightWords[size_t(step.rightIndex)])) {
            addSpan(rightSpans, rightStarts[size_t(step.rightIndex)], int(rightWords[size_t(step.rightIndex)].size()));
        }
    }
    left.changedWords = bridgeSpaces(leftSpans, left.text);
    right.changedWords = bridgeSpaces(rightSpans, right.text);
}

SideBySideDiff sideBySideDiff(const QString& left, const QString& right) {
    const std::vector<QString> leftLines = diffLinesOf(left);
    const std::vector<QString> rightLines = diffLinesOf(right);

    SideBySideDiff diff;
    std::vector<int> removed, inserted; // the pending changed run
    auto flushRun = [&] {
        if (removed.empty() && inserted.empty()) {
            return;
        }
        diff.changeStarts.push_back(int(diff.rows.size()));
        const size_t paired = std::min(removed.size(), inserted.size());
        for (size_t i = 0; i < std::max(removed.size(), inserted.size()); ++i) {
            DiffRow row;
            if (i < removed.size()) {
                row.left = {removed[i] + 1, leftLines[size_t(removed[i])], {}};
            }
            if (i < inserted.size()) {
                row.right = {inserted[i] + 1, rightLines[size_t(inserted[i])], {}};
            }
            if (i < paired) {
                row.kind = DiffRowKind::Changed;
                markChangedWords(row.left, row.right);
            } else {
                row.kind = i < removed.size() ? DiffRowKind::Removed : DiffRowKind::Inserted;
            }
            diff.rows.push_back(std::move(row));
        }
        diff.removedLines += int(removed.size());
        diff.insertedLines += int(inserted.size());
        removed.clear();
        inserted.clear();
    };
    for (const EditStep& step : editScript(leftLines, rightLines)) {
        switch (step.kind) {
        case EditStep::Delete:
            removed.push_back(step.leftIndex);
            break;
        case EditStep::Add:
            inserted.push_back(step.rightIndex);
            break;
        case EditStep::Common: {
            flushRun();
            DiffRow row;
            row.kind = DiffRowKind::Same;
            row.left = {step.leftIndex + 1, leftLines[size_t(step.leftIndex)], {}};
            row.right = {step.rightIndex + 1, rightLines[size_t(step.rightIndex)], {}};
            diff.rows.push_back(std::move(row));
            break;
        }
        }
    }
    flushRun();
    return diff;
}

int nextChangeRow(const SideBySideDiff& diff, int row) {
    for (int start : diff.changeStarts) {
        if (start > row) {
            return start;
        }
    }
    return -1;
}

int previousChangeRow(const SideBySideDiff& diff, int row) {
    for (auto it = diff.changeStarts.rbegin(); it != diff.changeStarts.rend(); ++it) {
        if (*it < row) {
            return *it;
        }
    }
    return -1;
}

} // namespace mkb::gui
