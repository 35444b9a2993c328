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

ProblemsModel::ProblemsModel(QObject* parent) : QAbstractTableModel(parent) {}

void ProblemsModel::setRows(std::vector<ProblemRow> rows) {
    beginResetModel();
    rows_ = std::move(rows);
    endResetModel();
}

const ProblemRow* ProblemsModel::rowAt(int row) const {
    return row >= 0 && row < int(rows_.size()) ? &rows_[size_t(row)] : nullptr;
}

int ProblemsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(rows_.size());
}

int ProblemsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
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
    case SuiteColumn:
        return tr("Suite");
    default:
        return {};
    }
}

} // namespace mkb::gui
