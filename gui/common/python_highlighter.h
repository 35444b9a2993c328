// Python syntax highlighting for read-only source panes: keywords, builtins, strings (incl. triple-quoted), comments;
// CUDA C++ embedded in a multi-line string (load_inline, cupy.RawKernel sources) gets CUDA highlighting on top.
#pragma once

#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>
#include <vector>

namespace mkb::gui {

class PythonHighlighter : public QSyntaxHighlighter {
    Q_OBJECT
public:
    explicit PythonHighlighter(QTextDocument* document);

    /// The format kinds a character can get; exposed so tests can ask what a position was painted as.
    enum class Kind {
        Plain,
        Keyword,
        Builtin,
        Definition,
        Decorator,
        Number,
        String,
        Comment,
        CudaKeyword,
        CudaBuiltin
    };
    QTextCharFormat formatFor(Kind kind) const;

protected:
    void highlightBlock(const QString& text) override;

private:
    struct Rule {
        QRegularExpression pattern;
        Kind kind;
        int captureGroup = 0;
    };
    // Block states remember an unterminated triple-quoted string across lines.
    enum BlockState { kNoString = 0, kInTripleSingle = 1, kInTripleDouble = 2 };

    void applyRules(const QString& text, int from, int to);
    int highlightStringsAndComments(const QString& text);
    /// Paints CUDA keywords, built-ins and // comments over the parts of text that are string.
    void highlightEmbeddedCuda(const QString& text);

    std::vector<Rule> rules_;
    std::vector<Rule> cudaRules_;
    QTextCharFormat formats_[10];
};

} // namespace mkb::gui
