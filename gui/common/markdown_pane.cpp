// MarkdownPane: QTextEdit shows either the raw text or QTextDocument's Markdown rendering of it.
#include "gui/common/markdown_pane.h"

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QTextEdit>
#include <QToolButton>
#include <QVBoxLayout>

namespace mkb::gui {

MarkdownPane::MarkdownPane(const QString& title, QWidget* parent) : QWidget(parent) {
    editor_ = new QTextEdit(this);
    editor_->setReadOnly(true);
    editor_->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    search_ = new QLineEdit(this);
    search_->setPlaceholderText(tr("Find…"));
    search_->setClearButtonEnabled(true);
    connect(search_, &QLineEdit::returnPressed, this, [this] { find(search_->text()); });
    toggle_ = new QToolButton(this);
    toggle_->setText(tr("Rendered"));
    toggle_->setCheckable(true);
    toggle_->setToolTip(tr("Show the Markdown rendered, or as plain text (select claims to tag in plain text)"));
    connect(toggle_, &QToolButton::toggled, this, &MarkdownPane::setRendered);

    auto* bar = new QHBoxLayout;
    auto* label = new QLabel(QStringLiteral("<b>%1</b>").arg(title.toHtmlEscaped()), this);
    bar->addWidget(label, 1);
    bar->addWidget(search_);
    bar->addWidget(toggle_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(editor_, 1);
    setRendered(false);
}

void MarkdownPane::setMarkdown(const QString& text) {
    text_ = text;
    setRendered(rendered_);
}

void MarkdownPane::setRendered(bool rendered) {
    rendered_ = rendered;
    if (toggle_->isChecked() != rendered) {
        const QSignalBlocker blocker(toggle_);
        toggle_->setChecked(rendered);
    }
    if (rendered) {
        editor_->document()->setDefaultFont(font());
        editor_->setMarkdown(text_);
    } else {
        editor_->document()->setDefaultFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
        editor_->setPlainText(text_);
    }
}

std::pair<int, int> MarkdownPane::selectedRange() const {
    const QTextCursor cursor = editor_->textCursor();
    if (!cursor.hasSelection()) {
        return {-1, -1};
    }
    if (!rendered_) {
        return {cursor.selectionStart(), cursor.selectionEnd()};
    }
    // QTextCursor's selectedText uses U+2029 between paragraphs.
    const QString selected = cursor.selectedText().replace(QChar(0x2029), QLatin1Char('\n'));
    const int start = text_.indexOf(selected);
    return start < 0 ? std::pair{-1, -1} : std::pair{start, start + int(selected.size())};
}

void MarkdownPane::selectRange(int start, int end) {
    setRendered(false);
    QTextCursor cursor(editor_->document());
    cursor.setPosition(std::clamp(start, 0, int(text_.size())));
    cursor.setPosition(std::clamp(end, 0, int(text_.size())), QTextCursor::KeepAnchor);
    editor_->setTextCursor(cursor);
    editor_->ensureCursorVisible();
}

bool MarkdownPane::find(const QString& text) {
    if (text.isEmpty()) {
        return false;
    }
    if (editor_->find(text)) {
        return true;
    }
    editor_->moveCursor(QTextCursor::Start);
    return editor_->find(text);
}

} // namespace mkb::gui
