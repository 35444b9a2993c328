// The side-by-side diff widget: two read-only code panes rendered from a SideBySideDiff, with line numbers, filler
// rows, changed-word highlights, Python highlighting, synchronised scrolling and next/previous change buttons.
#pragma once

#include "gui/common/diff_model.h"

#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace mkb::gui {

class DiffView : public QWidget {
    Q_OBJECT
public:
    explicit DiffView(QWidget* parent = nullptr);

    /// Diffs left against right and shows them; the titles name the two sides.
    void setTexts(const QString& leftTitle, const QString& left, const QString& rightTitle, const QString& right);
    const SideBySideDiff& diff() const { return diff_; }

    QPlainTextEdit* leftPane() const { return left_; }
    QPlainTextEdit* rightPane() const { return right_; }
    /// The row the change navigation stands on (-1 before the first change).
    int currentRow() const { return currentRow_; }

public slots:
    void nextChange();
    void previousChange();

private:
    void render();
    void goToRow(int row);
    void updateButtons();

    SideBySideDiff diff_;
    QLabel* leftTitle_ = nullptr;
    QLabel* rightTitle_ = nullptr;
    QLabel* stats_ = nullptr;
    QPlainTextEdit* left_ = nullptr;
    QPlainTextEdit* right_ = nullptr;
    QPushButton* next_ = nullptr;
    QPushButton* previous_ = nullptr;
    int currentRow_ = -1;
};

} // namespace mkb::gui
