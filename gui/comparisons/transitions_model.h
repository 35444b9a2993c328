// The transitions table: one row per KernelBench-X transition of the project (io::KbxTransition), with both rounds'
// verdicts, theirs and ours per boundary, the claimed and paired after/before ratios and the standing.
#pragma once

#include "core/io/kbx_transitions.h"
#include "gui/common/table_model.h"

#include <QString>
#include <QStringList>
#include <vector>

namespace mkb::gui {

class TransitionsModel : public TableModel {
    Q_OBJECT
public:
    /// The fixed columns; one "ours (boundary)" column per boundary regraded under follows TheirsColumn.
    enum Column { TaskColumn, CategoryColumn, RoundsColumn, KindsColumn, TheirsColumn, FixedBeforeOurs };
    enum Role {
        CategoryRole = FirstModelRole, // the category as the filter matches it ("uncategorised" for "")
        KindsRole,                     // QStringList: the row's kinds
    };

    explicit TransitionsModel(QObject* parent = nullptr);

    void setTransitions(std::vector<io::KbxTransition> transitions);
    const std::vector<io::KbxTransition>& transitions() const { return transitions_; }
    const io::KbxTransition* transitionAt(int row) const;
    /// The boundaries with an "ours" column, by name.
    const QStringList& boundaries() const { return boundaries_; }

    int claimedColumn() const { return FixedBeforeOurs + int(boundaries_.size()); }
    int pairedColumn() const { return claimedColumn() + 1; }
    int standingColumn() const { return claimedColumn() + 2; }

    /// The categories and kinds of the rows, sorted: what the filter combos offer after "all".
    QStringList categories() const;
    QStringList kinds() const;

    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// "correct", or "not correct: <reason>" / "never ran: <reason>" (the reason cut to one line).
    static QString verdictText(const Verdict& verdict, bool withReason);
    /// "before → after" of two verdicts in words, without reasons.
    static QString verdictPair(const Verdict& before, const Verdict& after);

protected:
    int tableRows() const override { return int(transitions_.size()); }
    int tableColumns() const override { return standingColumn() + 1; }

private:
    QString cellText(const io::KbxTransition& transition, int column) const;

    std::vector<io::KbxTransition> transitions_;
    QStringList boundaries_;
};

/// Keeps the rows of one category and one kind (empty = all) that contain a search text in some column.
class TransitionsFilter : public TableSortProxy {
    Q_OBJECT
public:
    explicit TransitionsFilter(QObject* parent = nullptr);

    void setCategory(const QString& category);
    void setKind(const QString& kind);
    void setSearchText(const QString& text);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    QString category_;
    QString kind_;
    QString search_;
};

} // namespace mkb::gui
