// DiffView: one text block per diff row on each side (fillers are empty blocks), so row i is block i on both sides
// and scrolling one pane by blocks scrolls the other to the same row.
#include "gui/common/diff_view.h"

#include "gui/common/python_highlighter.h"

#include <QFontDatabase>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QTextBlock>

namespace mkb::gui {
namespace {

const QColor kRemovedLine(255, 235, 233);
const QColor kInsertedLine(230, 255, 237);
const QColor kRemovedWord(253, 184, 192);
const QColor kInsertedWord(172, 242, 189);
const QColor kFiller(238, 238, 238);

// A plain text pane with a gutter of per-row line numbers (blank on fillers).
class NumberedPane : public QPlainTextEdit {
public:
    explicit NumberedPane(QWidget* parent) : QPlainTextEdit(parent), gutter_(new Gutter(this)) {
        setReadOnly(true);
        setLineWrapMode(QPlainTextEdit::NoWrap);
        setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
        connect(this, &QPlainTextEdit::updateRequest, this, [this](const QRect& rect, int dy) {
            if (dy != 0) {
                gutter_->scroll(0, dy);
            } else {
                gutter_->update(0, rect.y(), gutter_->width(), rect.height());
            }
        });
        setViewportMargins(gutterWidth(), 0, 0, 0);
    }
    void setLineNumbers(std::vector<int> numbers) {
        numbers_ = std::move(numbers);
        setViewportMargins(gutterWidth(), 0, 0, 0);
        gutter_->update();
    }

protected:
    void resizeEvent(QResizeEvent* event) override {
        QPlainTextEdit::resizeEvent(event);
        const QRect area = contentsRect();
        gutter_->setGeometry(QRect(area.left(), area.top(), gutterWidth(), area.height()));
    }

private:
    class Gutter : public QWidget {
    public:
        explicit Gutter(NumberedPane* pane) : QWidget(pane), pane_(pane) {}
        QSize sizeHint() const override { return {pane_->gutterWidth(), 0}; }

    protected:
        void paintEvent(QPaintEvent* event) override { pane_->paintGutter(event->rect()); }

    private:
        NumberedPane* pane_;
    };

    int gutterWidth() const {
        int largest = 1;
        for (int number : numbers_) {
            largest = std::max(largest, number);
        }
        return 10 + fontMetrics().horizontalAdvance(QLatin1Char('9')) * int(QString::number(largest).size());
    }
    void paintGutter(const QRect& rect) {
        QPainter painter(gutter_);
        painter.fillRect(rect, palette().window());
        painter.setPen(palette().color(QPalette::PlaceholderText));
        QTextBlock block = firstVisibleBlock();
        int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
        while (block.isValid() && top <= rect.bottom()) {
            const int height = qRound(blockBoundingRect(block).height());
            const size_t row = size_t(block.blockNumber());
            if (row < numbers_.size() && numbers_[row] > 0) {
                painter.drawText(0, top, gutter_->width() - 5, height, Qt::AlignRight | Qt::AlignVCenter,
                                 QString::number(numbers_[row]));
            }
            top += height;
            block = block.next();
        }
    }

    Gutter* gutter_;
    std::vector<int> numbers_;
};

void fillPane(QPlainTextEdit* pane, const SideBySideDiff& diff, bool leftSide) {
    QStringList lines;
    std::vector<int> numbers;
    for (const DiffRow& row : diff.rows) {
        const DiffSide& side = leftSide ? row.left : row.right;
        lines << side.text;
        numbers.push_back(side.lineNumber);
    }
    pane->setPlainText(lines.join(QLatin1Char('\n')));
    static_cast<NumberedPane*>(pane)->setLineNumbers(std::move(numbers));

    QList<QTextEdit::ExtraSelection> selections;
    QTextDocument* document = pane->document();
    for (size_t i = 0; i < diff.rows.size(); ++i) {
        const DiffRow& row = diff.rows[i];
        const DiffSide& side = leftSide ? row.left : row.right;
        if (row.kind == DiffRowKind::Same) {
            continue;
        }
        const QTextBlock block = document->findBlockByNumber(int(i));
        QTextEdit::ExtraSelection line;
        line.cursor = QTextCursor(block);
        line.format.setProperty(QTextFormat::FullWidthSelection, true);
        line.format.setBackground(side.isFiller() ? kFiller : leftSide ? kRemovedLine : kInsertedLine);
        selections << line;
        for (const DiffSpan& span : side.changedWords) {
            QTextEdit::ExtraSelection word;
            word.cursor = QTextCursor(block);
            word.cursor.setPosition(block.position() + span.start);
            word.cursor.setPosition(block.position() + span.start + span.length, QTextCursor::KeepAnchor);
            word.format.setBackground(leftSide ? kRemovedWord : kInsertedWord);
            selections << word;
        }
    }
    pane->setExtraSelections(selections);
}

} // namespace

DiffView::DiffView(QWidget* parent) : QWidget(parent) {
    left_ = new NumberedPane(this);
    left_->setObjectName(QStringLiteral("diffLeft"));
    right_ = new NumberedPane(this);
    right_->setObjectName(QStringLiteral("diffRight"));
    new PythonHighlighter(left_->document());
    new PythonHighlighter(right_->document());
    leftTitle_ = new QLabel(this);
    rightTitle_ = new QLabel(this);
    stats_ = new QLabel(this);
    stats_->setObjectName(QStringLiteral("diffStats"));
    previous_ = new QPushButton(tr("◀ Previous Change"), this);
    next_ = new QPushButton(tr("Next Change ▶"), this);
    previous_->setObjectName(QStringLiteral("previousChange"));
    next_->setObjectName(QStringLiteral("nextChange"));
    connect(next_, &QPushButton::clicked, this, &DiffView::nextChange);
    connect(previous_, &QPushButton::clicked, this, &DiffView::previousChange);

    // Rows are blocks on both sides, so equal scroll values show equal rows.
    auto link = [](QPlainTextEdit* from, QPlainTextEdit* to) {
        connect(from->verticalScrollBar(), &QScrollBar::valueChanged, to->verticalScrollBar(), &QScrollBar::setValue);
        connect(from->horizontalScrollBar(), &QScrollBar::valueChanged, to->horizontalScrollBar(),
                &QScrollBar::setValue);
    };
    link(left_, right_);
    link(right_, left_);

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(stats_, 1);
    buttons->addWidget(previous_);
    buttons->addWidget(next_);
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->addLayout(buttons, 0, 0, 1, 2);
    grid->addWidget(leftTitle_, 1, 0);
    grid->addWidget(rightTitle_, 1, 1);
    grid->addWidget(left_, 2, 0);
    grid->addWidget(right_, 2, 1);
    updateButtons();
}

void DiffView::setTexts(const QString& leftTitle, const QString& left, const QString& rightTitle,
                        const QString& right) {
    leftTitle_->setText(leftTitle);
    rightTitle_->setText(rightTitle);
    diff_ = sideBySideDiff(left, right);
    currentRow_ = -1;
    render();
}

void DiffView::render() {
    fillPane(left_, diff_, true);
    fillPane(right_, diff_, false);
    stats_->setText(diff_.changeStarts.empty() ? tr("No differences")
                                               : tr("%1 change(s): −%2 / +%3 lines")
                                                     .arg(diff_.changeStarts.size())
                                                     .arg(diff_.removedLines)
                                                     .arg(diff_.insertedLines));
    updateButtons();
}

void DiffView::goToRow(int row) {
    if (row < 0) {
        return;
    }
    currentRow_ = row;
    for (QPlainTextEdit* pane : {left_, right_}) {
        QTextCursor cursor(pane->document()->findBlockByNumber(row));
        pane->setTextCursor(cursor);
        pane->centerCursor();
    }
    updateButtons();
}

void DiffView::nextChange() {
    goToRow(nextChangeRow(diff_, currentRow_));
}

void DiffView::previousChange() {
    goToRow(previousChangeRow(diff_, currentRow_));
}

void DiffView::updateButtons() {
    next_->setEnabled(nextChangeRow(diff_, currentRow_) >= 0);
    previous_->setEnabled(previousChangeRow(diff_, currentRow_) >= 0);
}

} // namespace mkb::gui
