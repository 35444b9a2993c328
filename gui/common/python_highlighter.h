// Python syntax highlighting for read-only source panes: keywords, builtins, strings (incl. triple-quoted), comments.
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
    enum class Kind { Plain, Keyword, Builtin, Definition, Decorator, Number, String, Comment };
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

    std::vector<Rule> rules_;
    QTextCharFormat formats_[8];
};

} // namespace mkb::gui
