// Longest-common-subsequence line diff: common prefix and suffix trimmed, lines interned to ids, then dynamic
// programming over the changed middle.
#include "core/analysis/linediff.h"

#include <algorithm>
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

/// The two sides as integer ids, with their common prefix and suffix lengths.
struct Interned {
    std::vector<std::uint32_t> before;
    std::vector<std::uint32_t> after;
    std::size_t prefix = 0;
    std::size_t suffix = 0;
};

Interned intern(const std::vector<std::string>& before, const std::vector<std::string>& after) {
    std::unordered_map<std::string_view, std::uint32_t> ids;
    auto idOf = [&ids](const std::string& line) {
        return ids.emplace(line, static_cast<std::uint32_t>(ids.size())).first->second;
    };
    Interned result;
    for (const std::string& line : before) {
        result.before.push_back(idOf(line));
    }
    for (const std::string& line : after) {
        result.after.push_back(idOf(line));
    }
    const std::size_t shorter = std::min(before.size(), after.size());
    while (result.prefix < shorter && result.before[result.prefix] == result.after[result.prefix]) {
        ++result.prefix;
    }
    while (result.suffix < shorter - result.prefix &&
           result.before[before.size() - 1 - result.suffix] == result.after[after.size() - 1 - result.suffix]) {
        ++result.suffix;
    }
    return result;
}

std::size_t middleLcsLength(const Interned& sides) {
    const std::size_t beginB = sides.prefix;
    const std::size_t endB = sides.before.size() - sides.suffix;
    const std::size_t beginA = sides.prefix;
    const std::size_t endA = sides.after.size() - sides.suffix;
    // Keep the shorter side as the DP row.
    const bool rowIsAfter = endA - beginA <= endB - beginB;
    const std::vector<std::uint32_t>& rowSide = rowIsAfter ? sides.after : sides.before;
    const std::vector<std::uint32_t>& colSide = rowIsAfter ? sides.before : sides.after;
    const std::size_t rowBegin = rowIsAfter ? beginA : beginB;
    const std::size_t rowEnd = rowIsAfter ? endA : endB;
    const std::size_t colBegin = rowIsAfter ? beginB : beginA;
    const std::size_t colEnd = rowIsAfter ? endB : endA;
    std::vector<std::uint32_t> previous(rowEnd - rowBegin + 1, 0);
    std::vector<std::uint32_t> current(previous.size(), 0);
    for (std::size_t i = colBegin; i < colEnd; ++i) {
        for (std::size_t j = rowBegin; j < rowEnd; ++j) {
            const std::size_t k = j - rowBegin + 1;
            current[k] = colSide[i] == rowSide[j] ? previous[k - 1] + 1 : std::max(previous[k], current[k - 1]);
        }
        std::swap(previous, current);
    }
    return previous.back();
}

} // namespace

std::vector<DiffRow> diffLines(const std::vector<std::string>& before, const std::vector<std::string>& after) {
    const Interned sides = intern(before, after);
    const std::size_t n = before.size() - sides.prefix - sides.suffix;
    const std::size_t m = after.size() - sides.prefix - sides.suffix;
    // lcs[i][j] = LCS length of before[prefix+i ..] and after[prefix+j ..] within the middle.
    std::vector<std::uint32_t> lcs((n + 1) * (m + 1), 0);
    auto at = [&lcs, m](std::size_t i, std::size_t j) -> std::uint32_t& { return lcs[i * (m + 1) + j]; };
    for (std::size_t i = n; i-- > 0;) {
        for (std::size_t j = m; j-- > 0;) {
            at(i, j) = sides.before[sides.prefix + i] == sides.after[sides.prefix + j]
                           ? at(i + 1, j + 1) + 1
                           : std::max(at(i + 1, j), at(i, j + 1));
        }
    }
    std::vector<DiffRow> rows;
    for (std::size_t k = 0; k < sides.prefix; ++k) {
        rows.push_back(DiffRow{LineChange::Same, k + 1, k + 1, before[k]});
    }
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < n || j < m) {
        const std::size_t b = sides.prefix + i;
        const std::size_t a = sides.prefix + j;
        if (i < n && j < m && sides.before[b] == sides.after[a]) {
            rows.push_back(DiffRow{LineChange::Same, b + 1, a + 1, before[b]});
            ++i;
            ++j;
        } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
            rows.push_back(DiffRow{LineChange::Removed, b + 1, 0, before[b]});
            ++i;
        } else {
            rows.push_back(DiffRow{LineChange::Inserted, 0, a + 1, after[a]});
            ++j;
        }
    }
    for (std::size_t k = 0; k < sides.suffix; ++k) {
        const std::size_t b = before.size() - sides.suffix + k;
        const std::size_t a = after.size() - sides.suffix + k;
        rows.push_back(DiffRow{LineChange::Same, b + 1, a + 1, before[b]});
    }
    return rows;
}

LineDiffStats lineDiffStats(std::string_view before, std::string_view after) {
    const std::vector<std::string> beforeLines = splitLines(before);
    const std::vector<std::string> afterLines = splitLines(after);
    const Interned sides = intern(beforeLines, afterLines);
    LineDiffStats stats;
    stats.linesBefore = beforeLines.size();
    stats.linesAfter = afterLines.size();
    stats.common = sides.prefix + sides.suffix + middleLcsLength(sides);
    stats.removed = stats.linesBefore - stats.common;
    stats.inserted = stats.linesAfter - stats.common;
    const std::size_t total = stats.linesBefore + stats.linesAfter;
    stats.changedShare =
        total == 0 ? 0.0 : static_cast<double>(stats.removed + stats.inserted) / static_cast<double>(total);
    return stats;
}

} // namespace mkb::analysis
