// The problems view's filter and sort: a text filter over every column and a family choice.
#pragma once

#include "gui/common/table_model.h"

namespace mkb::gui {

class ProblemsFilter : public TableSortProxy {
    Q_OBJECT
public:
    explicit ProblemsFilter(QObject* parent = nullptr);

    /// Rows whose number, family, slug, title, tags or solutions contain every word of text (case-insensitive).
    void setText(const QString& text);
    /// Only this family; empty for all families.
    void setFamily(const QString& family);

    QString text() const { return words_.join(QLatin1Char(' ')); }
    QString family() const { return family_; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    QStringList words_;
    QString family_;
};

} // namespace mkb::gui
