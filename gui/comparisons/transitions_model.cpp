// TransitionsModel: cell texts from io::KbxTransition, sort keys from its numbers; TransitionsFilter matches the
// category, the kinds and the text.
#include "gui/comparisons/transitions_model.h"

#include <algorithm>
#include <set>

namespace mkb::gui {
namespace {

QString text(const std::string& value) {
    return QString::fromStdString(value);
}

QString ratioText(const std::optional<double>& ratio) {
    return ratio ? QString::number(*ratio, 'f', 3) : QString();
}

QString categoryOf(const io::KbxTransition& transition) {
    return transition.event.category.empty() ? QStringLiteral("uncategorised") : text(transition.event.category);
}

QString oneLine(const std::string& reason) {
    QString line = text(reason).simplified();
    return line.size() > 200 ? line.left(200) + QStringLiteral("…") : line;
}

} // namespace

TransitionsModel::TransitionsModel(QObject* parent) : TableModel(parent) {}

void TransitionsModel::setTransitions(std::vector<io::KbxTransition> transitions) {
    beginResetModel();
    transitions_ = std::move(transitions);
    std::set<QString> boundaries;
    for (const io::KbxTransition& transition : transitions_) {
        for (const auto& side : {transition.oursBefore, transition.oursAfter}) {
            for (const auto& [boundary, verdict] : side) {
                boundaries.insert(text(boundary));
            }
        }
    }
    boundaries_ = QStringList(boundaries.begin(), boundaries.end());
    endResetModel();
}

const io::KbxTransition* TransitionsModel::transitionAt(int row) const {
    return row >= 0 && row < int(transitions_.size()) ? &transitions_[std::size_t(row)] : nullptr;
}

QStringList TransitionsModel::categories() const {
    std::set<QString> found;
    for (const io::KbxTransition& transition : transitions_) {
        found.insert(categoryOf(transition));
    }
    return QStringList(found.begin(), found.end());
}

QStringList TransitionsModel::kinds() const {
    std::set<QString> found;
    for (const io::KbxTransition& transition : transitions_) {
        for (const std::string& kind : io::transitionKinds(transition.event.kinds)) {
            found.insert(text(kind));
        }
    }
    return QStringList(found.begin(), found.end());
}

QString TransitionsModel::verdictText(const Verdict& verdict, bool withReason) {
    if (verdict.correct) {
        return tr("correct");
    }
    const QString word = verdict.imported ? tr("not correct") : tr("never ran");
    return withReason && !verdict.error.empty() ? word + QStringLiteral(": ") + oneLine(verdict.error) : word;
}

QString TransitionsModel::verdictPair(const Verdict& before, const Verdict& after) {
    return verdictText(before, false) + QStringLiteral(" → ") + verdictText(after, false);
}

QString TransitionsModel::cellText(const io::KbxTransition& transition, int column) const {
    const analysis::TransitionEvent& event = transition.event;
    switch (column) {
    case TaskColumn:
        return text(event.task);
    case CategoryColumn:
        return categoryOf(transition);
    case RoundsColumn:
        return text(io::submissionName(transition.theirsBefore, event.beforeIndex)) + QStringLiteral(" → ") +
               text(io::submissionName(transition.theirsAfter, event.afterIndex));
    case KindsColumn:
        return text(event.kinds);
    case TheirsColumn:
        return verdictPair(transition.theirsBefore, transition.theirsAfter);
    default:
        break;
    }
    if (column >= FixedBeforeOurs && column < claimedColumn()) {
        const std::string boundary = boundaries_[column - FixedBeforeOurs].toStdString();
        const auto before = transition.oursBefore.find(boundary);
        const auto after = transition.oursAfter.find(boundary);
        const QString none = tr("not regraded");
        return (before == transition.oursBefore.end() ? none : verdictText(before->second, false)) +
               QStringLiteral(" → ") + (after == transition.oursAfter.end() ? none : verdictText(after->second, false));
    }
    if (column == claimedColumn()) {
        return ratioText(event.claimedRatio);
    }
    if (column == pairedColumn()) {
        return event.paired ? tr("%1 [%2, %3]")
                                  .arg(QString::number(event.paired->ratio, 'f', 3),
                                       QString::number(event.paired->ciLow, 'f', 3),
                                       QString::number(event.paired->ciHigh, 'f', 3))
                            : QString();
    }
    if (column == standingColumn()) {
        return text(io::standingText(event));
    }
    return {};
}

QVariant TransitionsModel::data(const QModelIndex& index, int role) const {
    const io::KbxTransition* transition = transitionAt(index.row());
    if (!transition || index.column() < 0 || index.column() >= tableColumns()) {
        return {};
    }
    switch (role) {
    case Qt::DisplayRole:
        return cellText(*transition, index.column());
    case Qt::ToolTipRole:
        if (index.column() == TheirsColumn) {
            return verdictText(transition->theirsBefore, true) + QLatin1Char('\n') +
                   verdictText(transition->theirsAfter, true);
        }
        if (index.column() == standingColumn()) {
            return text(io::notTimedText(transition->event));
        }
        return cellText(*transition, index.column());
    case SortRole:
        if (index.column() == claimedColumn()) {
            return sortKey(transition->event.claimedRatio);
        }
        if (index.column() == pairedColumn()) {
            return transition->event.paired ? QVariant(transition->event.paired->ratio) : QVariant();
        }
        if (index.column() == RoundsColumn) {
            return transition->event.afterIndex;
        }
        return cellText(*transition, index.column());
    case CategoryRole:
        return categoryOf(*transition);
    case KindsRole: {
        QStringList kinds;
        for (const std::string& kind : io::transitionKinds(transition->event.kinds)) {
            kinds << text(kind);
        }
        return kinds;
    }
    default:
        return {};
    }
}

QVariant TransitionsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return TableModel::headerData(section, orientation, role);
    }
    switch (section) {
    case TaskColumn:
        return tr("Task");
    case CategoryColumn:
        return tr("Category");
    case RoundsColumn:
        return tr("Before → after");
    case KindsColumn:
        return tr("Kinds");
    case TheirsColumn:
        return tr("Theirs (KernelBench-X)");
    default:
        break;
    }
    if (section >= FixedBeforeOurs && section < claimedColumn()) {
        return tr("Ours (%1)").arg(boundaries_[section - FixedBeforeOurs]);
    }
    if (section == claimedColumn()) {
        return tr("Claimed after/before");
    }
    if (section == pairedColumn()) {
        return tr("Paired after/before [95% CI]");
    }
    if (section == standingColumn()) {
        return tr("Standing");
    }
    return {};
}

TransitionsFilter::TransitionsFilter(QObject* parent) : TableSortProxy(parent) {}

void TransitionsFilter::setCategory(const QString& category) {
    category_ = category;
    invalidateFilter();
}

void TransitionsFilter::setKind(const QString& kind) {
    kind_ = kind;
    invalidateFilter();
}

void TransitionsFilter::setSearchText(const QString& text) {
    search_ = text;
    invalidateFilter();
}

bool TransitionsFilter::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    const QAbstractItemModel* model = sourceModel();
    const QModelIndex first = model->index(sourceRow, 0, sourceParent);
    if (!category_.isEmpty() && model->data(first, TransitionsModel::CategoryRole).toString() != category_) {
        return false;
    }
    if (!kind_.isEmpty() && !model->data(first, TransitionsModel::KindsRole).toStringList().contains(kind_)) {
        return false;
    }
    if (search_.isEmpty()) {
        return true;
    }
    for (int column = 0; column < model->columnCount(sourceParent); ++column) {
        if (model->data(model->index(sourceRow, column, sourceParent))
                .toString()
                .contains(search_, Qt::CaseInsensitive)) {
            return true;
        }
    }
    return false;
}

} // namespace mkb::gui
