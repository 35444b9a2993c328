// A corpus round's code cut at KernelBench-X's harness separator, its import-time test calls commented out, and the
// problem's reference() appended as solve().
#include "core/io/kbx_corpus_kernel.h"

#include "core/catalog/python_source.h"
#include "core/util/text.h"

#include <algorithm>
#include <cstddef>
#include <optional>

namespace mkb {
namespace {

// KernelBench-X writes a line of about 150 '#' between a kernel and its test harness; 50 tell it from a comment rule.
constexpr std::size_t kSeparatorHashes = 50;

/// The text's lines without their line breaks (a trailing '\r' dropped too); line N is element N - 1.
std::vector<std::string> linesOf(std::string_view text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) {
            end = text.size();
        }
        std::string line(text.substr(start, end - start));
        if (!line.empty() && line.back() == '\r') {
            line.pop_back();
        }
        lines.push_back(std::move(line));
        start = end + 1;
    }
    while (!lines.empty() && trimmed(lines.back()).empty()) {
        lines.pop_back();
    }
    return lines;
}

/// The last line a token covers: a string token may span several.
int lastLineOf(const PythonToken& token) {
    return token.line + static_cast<int>(std::count(token.text.begin(), token.text.end(), '\n'));
}

int lastLineOf(const PythonLogicalLine& line) {
    return line.tokens.empty() ? 0 : lastLineOf(line.tokens.back());
}

/// True when a string token that starts on an earlier line is still open on `line` (a '#' row inside a docstring).
bool insideString(const std::vector<PythonLogicalLine>& logical, int line) {
    for (const PythonLogicalLine& statement : logical) {
        for (const PythonToken& token : statement.tokens) {
            if (token.kind == PythonTokenKind::String && token.line < line && lastLineOf(token) >= line) {
                return true;
            }
        }
    }
    return false;
}

bool isSeparator(const std::string& line) {
    return line.size() >= kSeparatorHashes && line.find_first_not_of('#') >= kSeparatorHashes;
}

/// The 1-based line of KernelBench-X's harness separator, or nothing when the code has none.
std::optional<int> separatorLine(const std::vector<std::string>& lines,
                                 const std::optional<std::vector<PythonLogicalLine>>& logical) {
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const int line = static_cast<int>(i) + 1;
        if (isSeparator(lines[i]) && (!logical || !insideString(*logical, line))) {
            return line;
        }
    }
    return std::nullopt;
}

bool isName(const PythonToken& token, std::string_view text) {
    return token.kind == PythonTokenKind::Name && token.text == text;
}

bool isOperator(const PythonToken& token, std::string_view text) {
    return token.kind == PythonTokenKind::Operator && token.text == text;
}

bool isTestFunctionCall(const std::vector<PythonToken>& tokens, std::size_t at) {
    return at + 1 < tokens.size() && tokens[at].kind == PythonTokenKind::Name && startsWith(tokens[at].text, "test_") &&
           isOperator(tokens[at + 1], "(");
}

/// A module-level statement that calls a test_* function: `test_x()` or `results = test_x(...)`.
bool callsTestHarness(const PythonLogicalLine& statement) {
    if (!statement.atModuleLevel()) {
        return false;
    }
    const std::vector<PythonToken>& tokens = statement.tokens;
    return isTestFunctionCall(tokens, 0) || (tokens.size() > 2 && tokens[0].kind == PythonTokenKind::Name &&
                                             isOperator(tokens[1], "=") && isTestFunctionCall(tokens, 2));
}

std::string lineRange(int first, int last) {
    return first == last ? "line " + std::to_string(first)
                         : "lines " + std::to_string(first) + "-" + std::to_string(last);
}

/// The problem's reference() as solve(): its text with the name changed, and the call it returns.
struct SolveFunction {
    std::string text;
    std::string call;
    std::string callee; // the function the call names
};

// The name a task's function keeps when the task itself is called solve (KernelBench-X's LinearAlgebra/solve).
constexpr std::string_view kTaskSolveAlias = "kbx_task_solve";

/// The index just past the ')' that closes the '(' at `open`, or nothing when it is not closed in the tokens.
std::optional<std::size_t> pastClosingParen(const std::vector<PythonToken>& tokens, std::size_t open) {
    int depth = 0;
    for (std::size_t i = open; i < tokens.size(); ++i) {
        if (tokens[i].kind != PythonTokenKind::Operator) {
            continue;
        }
        const std::string& op = tokens[i].text;
        if (op == "(" || op == "[" || op == "{") {
            ++depth;
        } else if (op == ")" || op == "]" || op == "}") {
            if (--depth == 0) {
                return i + 1;
            }
        }
    }
    return std::nullopt;
}

Result<SolveFunction> solveFromReference(std::string_view problemSource, const std::string& where) {
    auto logical = tokenizePython(problemSource);
    if (!logical) {
        return makeError(where + ": its problem file cannot be read as Python: " + logical.error().message);
    }
    const std::vector<PythonLogicalLine>& statements = *logical;
    const auto header = std::find_if(statements.begin(), statements.end(), [](const PythonLogicalLine& statement) {
        return statement.atModuleLevel() && statement.tokens.size() > 1 && isName(statement.tokens[0], "def") &&
               isName(statement.tokens[1], "reference");
    });
    if (header == statements.end()) {
        return makeError(where + ": its problem file defines no module-level reference(), so there is no call for "
                                 "solve() to make");
    }
    const auto next = std::find_if(header + 1, statements.end(),
                                   [](const PythonLogicalLine& statement) { return statement.atModuleLevel(); });
    const std::vector<PythonToken>* body = header + 2 == next ? &(header + 1)->tokens : nullptr;
    const bool oneReturnOfACall = body != nullptr && body->size() > 2 && isName((*body)[0], "return") &&
                                  (*body)[1].kind == PythonTokenKind::Name && isOperator((*body)[2], "(") &&
                                  pastClosingParen(*body, 2) == body->size();
    if (!oneReturnOfACall) {
        return makeError(where + ": the reference() of its problem file (line " + std::to_string(header->line()) +
                         ") is not one `return task(...)` line, so solve() cannot make the same call");
    }
    const std::vector<std::string> lines = linesOf(problemSource);
    const int first = header->line();
    const int last = lastLineOf(*(header + 1));
    SolveFunction solve;
    for (int line = first; line <= last && line <= static_cast<int>(lines.size()); ++line) {
        std::string text = lines[static_cast<std::size_t>(line - 1)];
        if (line == first) {
            text.replace(text.find("reference"), std::string_view("reference").size(), "solve");
        }
        solve.text += text + "\n";
    }
    const int bodyFirst = (header + 1)->line();
    std::string call;
    for (int line = bodyFirst; line <= last; ++line) {
        call += std::string(call.empty() ? "" : " ") + std::string(trimmed(lines[static_cast<std::size_t>(line - 1)]));
    }
    solve.call = std::string(trimmed(std::string_view(call).substr(std::string_view("return").size())));
    solve.callee = (*body)[1].text;
    if (solve.callee == "solve") { // solve() would call itself: it calls the task's function by its alias
        const std::size_t callee = solve.text.find("solve", solve.text.find("return"));
        solve.text.replace(callee, std::string_view("solve").size(), kTaskSolveAlias);
        solve.call.replace(0, std::string_view("solve").size(), kTaskSolveAlias);
    }
    return solve;
}

} // namespace

Result<CorpusKernel> corpusRoundKernel(std::string_view roundCode, std::string_view problemSource,
                                       const std::string& where) {
    if (trimmed(roundCode).empty()) {
        return makeError(where + ": the round holds no code (the corpus stored none for it), so there is no kernel "
                                 "to grade");
    }
    auto solve = solveFromReference(problemSource, where);
    if (!solve) {
        return solve.error();
    }
    CorpusKernel kernel;
    kernel.call = solve->call;
    std::vector<std::string> lines = linesOf(roundCode);
    std::optional<std::vector<PythonLogicalLine>> logical;
    if (auto tokenized = tokenizePython(roundCode)) {
        logical = std::move(tokenized.value());
    }
    const std::optional<int> separator = separatorLine(lines, logical);
    const int keptLines = separator ? *separator - 1 : static_cast<int>(lines.size());
    if (separator) {
        kernel.dropped.push_back(lineRange(*separator, static_cast<int>(lines.size())) +
                                 ": KernelBench-X's test harness below its separator line, left out (its imports and "
                                 "its test call run at import)");
    }
    bool ownSolve = false;
    for (const PythonLogicalLine& statement : logical ? *logical : std::vector<PythonLogicalLine>{}) {
        if (statement.line() > keptLines) {
            break;
        }
        ownSolve = ownSolve || (statement.atModuleLevel() && statement.tokens.size() > 1 &&
                                isName(statement.tokens[0], "def") && isName(statement.tokens[1], "solve"));
        if (!callsTestHarness(statement)) {
            continue;
        }
        const int last = std::min(lastLineOf(statement), keptLines);
        for (int line = statement.line(); line <= last; ++line) {
            lines[static_cast<std::size_t>(line - 1)].insert(0, "# ");
        }
        kernel.dropped.push_back(lineRange(statement.line(), last) + ": `" +
                                 safeOneLine(lines[static_cast<std::size_t>(statement.line() - 1)].substr(2)) +
                                 "` commented out (it calls KernelBench-X's test harness at import)");
    }
    const bool taskIsSolve = solve->callee == "solve";
    if (ownSolve && !taskIsSolve) {
        kernel.dropped.push_back("the round's own module-level solve() is replaced by the one below");
    }
    for (int line = 1; line <= keptLines; ++line) {
        kernel.source += lines[static_cast<std::size_t>(line - 1)] + "\n";
    }
    while (kernel.source.size() >= 2 && kernel.source.ends_with("\n\n")) {
        kernel.source.pop_back();
    }
    if (separator) {
        kernel.source += "\n# mkb: KernelBench-X's test harness (" +
                         lineRange(*separator, static_cast<int>(lines.size())) +
                         " of the corpus's code) is left out; it runs at import.\n";
    }
    if (taskIsSolve) {
        kernel.source += "\n\n# mkb: the task's function is itself called solve; it keeps that function as " +
                         std::string(kTaskSolveAlias) + ".\n" + std::string(kTaskSolveAlias) + " = solve\n";
        kernel.dropped.push_back("the task's function solve() is kept as " + std::string(kTaskSolveAlias) +
                                 ", which the contract's solve() calls");
    }
    kernel.source += "\n\n# mkb: the contract's entry point makes the call the problem's reference() makes.\n";
    kernel.source += solve->text;
    return kernel;
}

} // namespace mkb
