// A read-only pane for Markdown text (skills): rendered or plain, with a search field; the plain view's selection
// maps to character ranges of the original text.
#pragma once

#include <QWidget>

class QLineEdit;
class QTextEdit;
class QToolButton;

namespace mkb::gui {

class MarkdownPane : public QWidget {
    Q_OBJECT
public:
    explicit MarkdownPane(const QString& title, QWidget* parent = nullptr);

    void setMarkdown(const QString& text);
    QString markdown() const { return text_; }

    /// Rendered Markdown (true) or the raw text (false); the raw view is the default.
    void setRendered(bool rendered);
    bool isRendered() const { return rendered_; }

    /// The selection as a range of the original text (QString positions), or {-1, -1} when nothing is selected.
    /// In the rendered view the selected text is looked up in the original; not found gives {-1, -1}.
    std::pair<int, int> selectedRange() const;
    /// Selects [start, end) of the original text (switches to the raw view).
    void selectRange(int start, int end);

    /// Finds text after the cursor (wrapping); true when found.
    bool find(const QString& text);

    QTextEdit* editor() const { return editor_; }
    QLineEdit* searchField() const { return search_; }
    QToolButton* renderToggle() const { return toggle_; }

private:
    QString text_;
    bool rendered_ = false;
    QTextEdit* editor_ = nullptr;
    QLineEdit* search_ = nullptr;
    QToolButton* toggle_ = nullptr;
};

} // namespace mkb::gui
