// Line diff on dtl's shortest edit script (the engine the workbench's diff view uses too), lines interned to ids.
#include "core/analysis/linediff.h"

#include <dtl/dtl.hpp>

#include <cstdint>
#include <unordered_map>

namespace mkb::analysis {

std::vector<std::string> splitLines(std::string_view text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        const bool last = end == std::string_view::npos;
        if (last) {
            end = text.size();
        }
        std::string_view line = text.substr(start, end - start);
        if (!last && !line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        lines.emplace_back(line);
        start = end + 1;
    }
    return lines;
}

namespace {

using LineIds = std::vector<std::uint32_t>;

/// Both sides as integer ids (equal lines, equal ids), so the engine compares integers, not strings.
std::pair<LineIds, LineIds> intern(const std::vector<std::string>& before, const std::vector<std::string>& after) {
    std::unordered_map<std::string_view, std::uint32_t> ids;
    auto idsOf = [&ids](const std::vector<std::string>& lines) {
        LineIds out;
        out.reserve(lines.size());
        for (const std::string& line : lines) {
            out.push_back(ids.emplace(line, static_cast<std::uint32_t>(ids.size())).first->second);
        }
        return out;
    };
    LineIds beforeIds = idsOf(before);
    return {std::move(beforeIds), idsOf(after)};
}

} // namespace

std::vector<EditStep> editScript(const std::vector<std::uint32_t>& before, const std::vector<std::uint32_t>& after) {
    dtl::Diff<std::uint32_t, LineIds> diff(before, after);
    diff.onHuge();
    diff.compose();
    std::vector<EditStep> steps;
    steps.reserve(before.size() + after.size());
    for (const auto& [id, info] : diff.getSes().getSequence()) {
        (void)id;
        const auto beforeIndex = static_cast<std::size_t>(info.beforeIdx);
        const auto afterIndex = static_cast<std::size_t>(info.afterIdx);
        switch (info.type) {
        case dtl::SES_COMMON:
            steps.push_back(EditStep{LineChange::Same, beforeIndex, afterIndex});
            break;
        case dtl::SES_DELETE:
            steps.push_back(EditStep{LineChange::Removed, beforeIndex, 0});
            break;
        case dtl::SES_ADD:
            steps.push_back(EditStep{LineChange::Inserted, 0, afterIndex});
            break;
        }
    }
    return steps;
}

std::vector<DiffRow> diffLines(const std::vector<std::string>& before, const std::vector<std::string>& after) {
    const auto [beforeIds, afterIds] = intern(before, after);
    std::vector<DiffRow> rows;
    rows.reserve(before.size() + after.size());
    // Within a changed run, removals come before insertions whatever order the engine found them in.
    std::vector<DiffRow> inserted;
    auto flushInserted = [&] {
        rows.insert(rows.end(), std::make_move_iterator(inserted.begin()), std::make_move_iterator(inserted.end()));
        inserted.clear();
    };
    for (const EditStep& step : editScript(beforeIds, afterIds)) {
        switch (step.change) {
        case LineChange::Same:
            flushInserted();
            rows.push_back(DiffRow{LineChange::Same, step.beforeIndex, step.afterIndex, before[step.beforeIndex - 1]});
            break;
        case LineChange::Removed:
            rows.push_back(DiffRow{LineChange::Removed, step.beforeIndex, 0, before[step.beforeIndex - 1]});
            break;
        case LineChange::Inserted:
            inserted.push_back(DiffRow{LineChange::Inserted, 0, step.afterIndex, after[step.afterIndex - 1]});
            break;
        }
    }
    flushInserted();
    return rows;
}

LineDiffStats lineDiffStats(std::string_view before, std::string_view after) {
    const std::vector<std::string> beforeLines = splitLines(before);
    const std::vector<std::string> afterLines = splitLines(after);
    const auto [beforeIds, afterIds] = intern(beforeLines, afterLines);
    LineDiffStats stats;
    stats.linesBefore = beforeLines.size();
    stats.linesAfter = afterLines.size();
    dtl::Diff<std::uint32_t, LineIds> diff(beforeIds, afterIds);
    diff.onOnlyEditDistance(); // no edit script kept: memory linear in the sides
    diff.compose();
    // A shortest edit script removes and inserts exactly the lines outside a longest common subsequence.
    const auto editDistance = static_cast<std::size_t>(diff.getEditDistance());
    stats.common = (stats.linesBefore + stats.linesAfter - editDistance) / 2;
    stats.removed = stats.linesBefore - stats.common;
    stats.inserted = stats.linesAfter - stats.common;
    const std::size_t total = stats.linesBefore + stats.linesAfter;
    stats.changedShare =
        total == 0 ? 0.0 : static_cast<double>(stats.removed + stats.inserted) / static_cast<double>(total);
    return stats;
}

} // namespace mkb::analysis
