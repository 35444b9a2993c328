// Python syntax highlighting: a line scanner for strings and comments, regex rules for the rest.
#include "gui/common/python_highlighter.h"

#include <QColor>
#include <QFont>
#include <QPalette>
#include <QTextDocument>

namespace mkb::gui {
namespace {

const char* const kKeywords[] = {"False",   "None",     "True",     "and",    "as",   "assert", "async",  "await",
                                 "break",   "class",    "continue", "def",    "del",  "elif",   "else",   "except",
                                 "finally", "for",      "from",     "global", "if",   "import", "in",     "is",
                                 "lambda",  "nonlocal", "not",      "or",     "pass", "raise",  "return", "try",
                                 "while",   "with",     "yield",    "match",  "case"};

const char* const kBuiltins[] = {"abs",        "all", "any",   "bool",    "dict",    "enumerate", "float", "int",
                                 "isinstance", "len", "list",  "max",     "min",     "print",     "range", "repr",
                                 "round",      "set", "slice", "sorted",  "str",     "sum",       "super", "tuple",
                                 "type",       "zip", "self",  "getattr", "setattr", "hasattr"};

const char* const kCudaKeywords[] = {
    "__global__", "__device__", "__host__",      "__shared__", "__constant__", "__restrict__", "__forceinline__",
    "extern",     "const",      "void",          "int",        "unsigned",     "float",        "double",
    "half",       "__half",     "__nv_bfloat16", "bool",       "char",         "long",         "short",
    "auto",       "for",        "while",         "if",         "else",         "return",       "break",
    "continue",   "struct",     "template",      "typename",   "static",       "inline",       "size_t",
    "int64_t",    "uint32_t",   "float2",        "float4",     "namespace",    "using",        "constexpr"};

const char* const kCudaBuiltins[] = {
    "threadIdx",  "blockIdx",    "blockDim",        "gridDim",          "warpSize",  "__syncthreads",
    "__syncwarp", "__shfl_sync", "__shfl_xor_sync", "__shfl_down_sync", "atomicAdd", "atomicMax",
    "__expf",     "__fdividef",  "__ldg",           "rsqrtf",           "expf",      "fmaxf",
    "fminf",      "sqrtf",       "__float2half",    "__half2float",     "tanhf",     "logf"};

QString wordAlternation(const char* const* words, size_t count) {
    QStringList escaped;
    for (size_t i = 0; i < count; ++i) {
        escaped << QRegularExpression::escape(QString::fromLatin1(words[i]));
    }
    return QStringLiteral("\\b(?:%1)\\b").arg(escaped.join(QLatin1Char('|')));
}

} // namespace

PythonHighlighter::PythonHighlighter(QTextDocument* document) : QSyntaxHighlighter(document) {
    const bool dark = QPalette().color(QPalette::Base).lightness() < 128;
    auto makeFormat = [](QColor color, bool bold = false, bool italic = false) {
        QTextCharFormat format;
        format.setForeground(color);
        if (bold) {
            format.setFontWeight(QFont::Bold);
        }
        format.setFontItalic(italic);
        return format;
    };
    formats_[int(Kind::Plain)] = QTextCharFormat();
    formats_[int(Kind::Keyword)] = makeFormat(dark ? QColor(0xc6, 0x78, 0xdd) : QColor(0x00, 0x33, 0x99), true);
    formats_[int(Kind::Builtin)] = makeFormat(dark ? QColor(0x56, 0xb6, 0xc2) : QColor(0x00, 0x70, 0x80));
    formats_[int(Kind::Definition)] = makeFormat(dark ? QColor(0x61, 0xaf, 0xef) : QColor(0x00, 0x55, 0xbb), true);
    formats_[int(Kind::Decorator)] = makeFormat(dark ? QColor(0xe5, 0xc0, 0x7b) : QColor(0x80, 0x60, 0x00));
    formats_[int(Kind::Number)] = makeFormat(dark ? QColor(0xd1, 0x9a, 0x66) : QColor(0x99, 0x44, 0x00));
    formats_[int(Kind::String)] = makeFormat(dark ? QColor(0x98, 0xc3, 0x79) : QColor(0x06, 0x7d, 0x17));
    formats_[int(Kind::Comment)] = makeFormat(dark ? QColor(0x7f, 0x84, 0x8e) : QColor(0x70, 0x70, 0x70), false, true);
    formats_[int(Kind::CudaKeyword)] = makeFormat(dark ? QColor(0xe0, 0x6c, 0x75) : QColor(0x8b, 0x00, 0x8b), true);
    formats_[int(Kind::CudaBuiltin)] = makeFormat(dark ? QColor(0x56, 0xb6, 0xc2) : QColor(0x00, 0x60, 0x90), true);

    const auto keywordCount = sizeof(kKeywords) / sizeof(kKeywords[0]);
    const auto builtinCount = sizeof(kBuiltins) / sizeof(kBuiltins[0]);
    rules_.push_back({QRegularExpression(wordAlternation(kKeywords, keywordCount)), Kind::Keyword});
    rules_.push_back({QRegularExpression(wordAlternation(kBuiltins, builtinCount)), Kind::Builtin});
    rules_.push_back(
        {QRegularExpression(QStringLiteral("\\b(?:[0-9][0-9_]*\\.?[0-9_]*(?:[eE][+-]?[0-9]+)?|0[xX][0-9a-fA-F_]+)\\b")),
         Kind::Number});
    rules_.push_back({QRegularExpression(QStringLiteral("^\\s*(@[A-Za-z_][A-Za-z0-9_.]*)")), Kind::Decorator, 1});
    rules_.push_back(
        {QRegularExpression(QStringLiteral("\\b(?:def|class)\\s+([A-Za-z_][A-Za-z0-9_]*)")), Kind::Definition, 1});

    const auto cudaKeywordCount = sizeof(kCudaKeywords) / sizeof(kCudaKeywords[0]);
    const auto cudaBuiltinCount = sizeof(kCudaBuiltins) / sizeof(kCudaBuiltins[0]);
    cudaRules_.push_back({QRegularExpression(wordAlternation(kCudaKeywords, cudaKeywordCount)), Kind::CudaKeyword});
    cudaRules_.push_back({QRegularExpression(wordAlternation(kCudaBuiltins, cudaBuiltinCount)), Kind::CudaBuiltin});
    cudaRules_.push_back({QRegularExpression(QStringLiteral("^\\s*#\\s*[a-z]+")), Kind::CudaKeyword});
    cudaRules_.push_back({QRegularExpression(QStringLiteral("//.*$")), Kind::Comment});
}

QTextCharFormat PythonHighlighter::formatFor(Kind kind) const {
    return formats_[int(kind)];
}

void PythonHighlighter::applyRules(const QString& text, int from, int to) {
    if (from >= to) {
        return;
    }
    const QString segment = text.mid(from, to - from);
    for (const Rule& rule : rules_) {
        auto matches = rule.pattern.globalMatch(segment);
        while (matches.hasNext()) {
            const auto match = matches.next();
            const int start = match.capturedStart(rule.captureGroup);
            if (start >= 0) {
                setFormat(from + start, match.capturedLength(rule.captureGroup), formats_[int(rule.kind)]);
            }
        }
    }
}

// Walks the line once, so quotes inside comments and '#' inside strings are treated correctly.
// Returns the block state to carry to the next line.
int PythonHighlighter::highlightStringsAndComments(const QString& text) {
    const QTextCharFormat& stringFormat = formats_[int(Kind::String)];
    int position = 0;
    int codeStart = 0;
    int state = previousBlockState() < 0 ? kNoString : previousBlockState();

    auto closeTriple = [&](QChar quote) -> bool {
        const QString delimiter(3, quote);
        const int end = text.indexOf(delimiter, position);
        if (end < 0) {
            setFormat(position, int(text.size()) - position, stringFormat);
            position = int(text.size());
            return false;
        }
        setFormat(position, end + 3 - position, stringFormat);
        position = end + 3;
        return true;
    };

    if (state != kNoString) {
        const QChar quote = state == kInTripleSingle ? QLatin1Char('\'') : QLatin1Char('"');
        if (!closeTriple(quote)) {
            return state;
        }
        state = kNoString;
        codeStart = position;
    }

    while (position < text.size()) {
        const QChar c = text.at(position);
        if (c == QLatin1Char('#')) {
            applyRules(text, codeStart, position);
            setFormat(position, int(text.size()) - position, formats_[int(Kind::Comment)]);
            return kNoString;
        }
        if (c == QLatin1Char('\'') || c == QLatin1Char('"')) {
            applyRules(text, codeStart, position);
            // A string prefix (r, b, f, rb, ...) belongs to the string.
            int start = position;
            while (start > codeStart && text.at(start - 1).isLetter() &&
                   QStringLiteral("rRbBfFuU").contains(text.at(start - 1))) {
                --start;
            }
            if (text.mid(position, 3) == QString(3, c)) {
                setFormat(start, position - start, stringFormat);
                position += 3;
                if (!closeTriple(c)) {
                    return c == QLatin1Char('\'') ? kInTripleSingle : kInTripleDouble;
                }
            } else {
                int end = position + 1;
                while (end < text.size() && text.at(end) != c) {
                    end += text.at(end) == QLatin1Char('\\') ? 2 : 1;
                }
                end = std::min<int>(end + 1, int(text.size()));
                setFormat(start, end - start, stringFormat);
                position = end;
            }
            codeStart = position;
            continue;
        }
        ++position;
    }
    applyRules(text, codeStart, int(text.size()));
    return kNoString;
}

void PythonHighlighter::highlightEmbeddedCuda(const QString& text) {
    const QColor stringColour = formats_[int(Kind::String)].foreground().color();
    for (const Rule& rule : cudaRules_) {
        auto matches = rule.pattern.globalMatch(text);
        while (matches.hasNext()) {
            const auto match = matches.next();
            const int start = int(match.capturedStart());
            if (format(start).foreground().color() == stringColour) {
                setFormat(start, int(match.capturedLength()), formats_[int(rule.kind)]);
            }
        }
    }
}

void PythonHighlighter::highlightBlock(const QString& text) {
    const int before = previousBlockState() < 0 ? int(kNoString) : previousBlockState();
    const int after = highlightStringsAndComments(text);
    setCurrentBlockState(after);
    // Only lines of a multi-line string: CUDA sources are kept in triple-quoted strings, short strings hold words.
    if (before != kNoString || after != kNoString) {
        highlightEmbeddedCuda(text);
    }
}

} // namespace mkb::gui
