// The problems table model: presents ProblemRow values; holds no logic beyond formatting them.
#include "gui/problems/problems_model.h"

#include <QFont>
#include <QStringList>
#include <algorithm>

namespace mkb::gui {
namespace {

QString qs(const std::string& text) {
    return QString::fromStdString(text);
}

QString joined(const std::vector<std::string>& items, const QString& separator) {
    QStringList list;
    for (const auto& item : items) {
        list << qs(item);
    }
    return list.join(separator);
}

QString solutionsText(const ProblemRow& row) {
    return row.solutionDsls.empty() ? QStringLiteral("—") : joined(row.solutionDsls, QStringLiteral(", "));
}

QString lastGradingText(const std::vector<LastGrading>& gradings) {
    QStringList parts;
    for (const LastGrading* grading : newestPerDsl(gradings)) {
        parts << QStringLiteral("%1 %2").arg(qs(grading->dsl), qs(describeGrading(*grading)));
    }
    return parts.isEmpty() ? QStringLiteral("—") : parts.join(QStringLiteral(" · "));
}

QString lastGradingTooltip(const std::vector<LastGrading>& gradings) {
    QStringList lines;
    for (const LastGrading& grading : gradings) {
        lines << QStringLiteral("%1 · %2 · %3: %4 (%5)")
                     .arg(qs(grading.dsl), qs(grading.model), qs(grading.coordinate), qs(describeGrading(grading)),
                          grading.finishedAt.empty() ? ProblemsModel::tr("not finished") : qs(grading.finishedAt));
    }
    return lines.isEmpty() ? ProblemsModel::tr("No trial of this problem in the project yet.")
                           : lines.join(QLatin1Char('\n'));
}

const std::vector<LastGrading>& noGradings() {
    static const std::vector<LastGrading> none;
    return none;
}

QString solutionsTooltip(const ProblemRow& row) {
    QStringList lines;
    for (const std::string& dsl : knownSolutionDsls()) {
        const bool present = std::find(row.solutionDsls.begin(), row.solutionDsls.end(), dsl) != row.solutionDsls.end();
        lines << QStringLiteral("%1: %2").arg(qs(dsl), present ? ProblemsModel::tr("shipped solution")
                                                               : ProblemsModel::tr("no solution"));
    }
    return lines.join(QLatin1Char('\n'));
}

} // namespace

ProblemsModel::ProblemsModel(QObject* parent) : TableModel(parent) {}

void ProblemsModel::setRows(std::vector<ProblemRow> rows) {
    beginResetModel();
    rows_ = std::move(rows);
    endResetModel();
}

void ProblemsModel::setLastGradings(std::map<ProblemKey, std::vector<LastGrading>> gradings) {
    gradings_ = std::move(gradings);
    if (!rows_.empty()) {
        emit dataChanged(index(0, LastGradingColumn), index(int(rows_.size()) - 1, LastGradingColumn));
    }
}

const std::vector<LastGrading>& ProblemsModel::lastGradingsOf(int row) const {
    const ProblemRow* problemRow = rowAt(row);
    if (!problemRow) {
        return noGradings();
    }
    const auto found =
        gradings_.find({problemRow->problem.suite, problemRow->problem.number, problemRow->problem.slug});
    return found == gradings_.end() ? noGradings() : found->second;
}

const ProblemRow* ProblemsModel::rowAt(int row) const {
    return row >= 0 && row < int(rows_.size()) ? &rows_[size_t(row)] : nullptr;
}

QVariant ProblemsModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const ProblemRow& row = rows_[size_t(index.row())];
    const Problem& problem = row.problem;
    if (role == FilterTextRole) {
        return QStringLiteral("%1 %2 %3 %4 %5 %6")
            .arg(qs(problem.code()), qs(problem.family), qs(problem.slug), qs(problem.title),
                 joined(problem.meta.tags, QStringLiteral(" ")), solutionsText(row))
            .toLower();
    }
    if (role == FamilyRole) {
        return qs(problem.family);
    }
    if (role == SortRole && index.column() == NumberColumn) {
        return problem.number;
    }
    if (role == SortRole && index.column() == SolutionsColumn) {
        return int(row.solutionDsls.size());
    }
    if (index.column() == LastGradingColumn) {
        const std::vector<LastGrading>& gradings = lastGradingsOf(index.row());
        if (role == Qt::DisplayRole) {
            return lastGradingText(gradings);
        }
        if (role == SortRole) {
            int passed = 0;
            for (const LastGrading* grading : newestPerDsl(gradings)) {
                passed += grading->passed.value_or(false) ? 1 : 0;
            }
            return passed * 1000 + int(gradings.size()); // more passing DSLs first when descending
        }
        if (role == Qt::ToolTipRole) {
            return lastGradingTooltip(gradings);
        }
    }
    if (role == Qt::DisplayRole || role == SortRole) {
        QString text;
        switch (index.column()) {
        case NumberColumn:
            text = QStringLiteral("%1").arg(problem.number, 2, 10, QLatin1Char('0'));
            break;
        case FamilyColumn:
            text = qs(problem.family);
            break;
        case SlugColumn:
            text = qs(problem.slug);
            break;
        case TitleColumn:
            text = qs(problem.title);
            break;
        case TagsColumn:
            text = joined(problem.meta.tags, QStringLiteral(", "));
            break;
        case SolutionsColumn:
            text = solutionsText(row);
            break;
        case SuiteColumn:
            text = row.origin == ProblemOrigin::ProjectStore ? tr("%1 (project)").arg(qs(problem.suite))
                                                             : qs(problem.suite);
            break;
        default:
            break;
        }
        return role == SortRole ? QVariant(text.toLower()) : QVariant(text);
    }
    if (role == Qt::ToolTipRole) {
        if (index.column() == SolutionsColumn) {
            return solutionsTooltip(row);
        }
        return qs(problem.path.string());
    }
    if (role == Qt::TextAlignmentRole && index.column() == NumberColumn) {
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (role == Qt::FontRole && row.origin == ProblemOrigin::ProjectStore) {
        QFont font;
        font.setItalic(true);
        return font;
    }
    return {};
}

QVariant ProblemsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    switch (section) {
    case NumberColumn:
        return tr("No.");
    case FamilyColumn:
        return tr("Family");
    case SlugColumn:
        return tr("Slug");
    case TitleColumn:
        return tr("Title");
    case TagsColumn:
        return tr("Tags");
    case SolutionsColumn:
        return tr("Solutions");
    case LastGradingColumn:
        return tr("Last grading");
    case SuiteColumn:
        return tr("Suite");
    default:
        return {};
    }
}

} // namespace mkb::gui
