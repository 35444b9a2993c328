// The Problems view's widgets and their wiring; the data comes in as a ProblemsListing.
#include "gui/problems/problems_view.h"

#include "gui/common/python_highlighter.h"
#include "gui/common/table_copy.h"
#include "gui/problems/problems_filter.h"
#include "gui/problems/problems_model.h"

#include <QComboBox>
#include <QDataStream>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QIODevice>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <set>

namespace mkb::gui {
namespace {

constexpr quint32 kLayoutMagic = 0x4D4B5056; // 'MKPV'

QString qs(const std::string& text) {
    return QString::fromStdString(text);
}

QString htmlEscaped(const std::string& text) {
    return qs(text).toHtmlEscaped();
}

} // namespace

ProblemsView::ProblemsView(QWidget* parent)
    : QWidget(parent), model_(new ProblemsModel(this)), filter_(new ProblemsFilter(this)),
      filterEdit_(new QLineEdit(this)), familyCombo_(new QComboBox(this)), table_(new QTableView(this)),
      splitter_(new QSplitter(Qt::Horizontal, this)), detailsHeader_(new QLabel(this)), gradingLabel_(new QLabel(this)),
      sourceEditor_(new QPlainTextEdit(this)), highlighter_(nullptr), statusLine_(new QLabel(this)) {
    setObjectName(QStringLiteral("problemsView"));
    filter_->setSourceModel(model_);

    filterEdit_->setObjectName(QStringLiteral("problemsFilterEdit"));
    filterEdit_->setPlaceholderText(tr("Filter by number, family, slug, title, tag or DSL…"));
    filterEdit_->setClearButtonEnabled(true);
    familyCombo_->setObjectName(QStringLiteral("problemsFamilyCombo"));
    familyCombo_->addItem(tr("All families"), QString());
    familyCombo_->setSizeAdjustPolicy(QComboBox::AdjustToContents);

    auto* filterBar = new QHBoxLayout;
    filterBar->addWidget(filterEdit_, 1);
    filterBar->addWidget(familyCombo_);

    table_->setObjectName(QStringLiteral("problemsTable"));
    table_->setModel(filter_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(ProblemsModel::NumberColumn, Qt::AscendingOrder);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    table_->setAlternatingRowColors(true);
    table_->setWordWrap(false);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    installCopyRowsAction(table_);

    detailsHeader_->setObjectName(QStringLiteral("problemDetailsHeader"));
    detailsHeader_->setWordWrap(true);
    detailsHeader_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    detailsHeader_->setText(tr("Select a problem to see its reference source."));

    gradingLabel_->setObjectName(QStringLiteral("problemGradingLabel"));
    gradingLabel_->setWordWrap(true);
    gradingLabel_->setTextFormat(Qt::RichText);
    gradingLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    sourceEditor_->setObjectName(QStringLiteral("problemSourceEditor"));
    sourceEditor_->setReadOnly(true);
    sourceEditor_->setLineWrapMode(QPlainTextEdit::NoWrap);
    sourceEditor_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    highlighter_ = new PythonHighlighter(sourceEditor_->document());

    auto* details = new QWidget(this);
    auto* detailsLayout = new QVBoxLayout(details);
    detailsLayout->setContentsMargins(0, 0, 0, 0);
    detailsLayout->addWidget(detailsHeader_);
    detailsLayout->addWidget(gradingLabel_);
    detailsLayout->addWidget(sourceEditor_, 1);

    splitter_->addWidget(table_);
    splitter_->addWidget(details);
    splitter_->setStretchFactor(0, 3);
    splitter_->setStretchFactor(1, 2);
    splitter_->setChildrenCollapsible(false);

    statusLine_->setObjectName(QStringLiteral("problemsStatusLine"));
    statusLine_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(filterBar);
    layout->addWidget(splitter_, 1);
    layout->addWidget(statusLine_);

    connect(filterEdit_, &QLineEdit::textChanged, filter_, &ProblemsFilter::setText);
    connect(familyCombo_, &QComboBox::currentIndexChanged, this,
            [this] { filter_->setFamily(familyCombo_->currentData().toString()); });
    connect(filter_, &QAbstractItemModel::rowsInserted, this, &ProblemsView::updateStatusLine);
    connect(filter_, &QAbstractItemModel::rowsRemoved, this, &ProblemsView::updateStatusLine);
    connect(filter_, &QAbstractItemModel::modelReset, this, &ProblemsView::updateStatusLine);
    connect(filter_, &QAbstractItemModel::layoutChanged, this, &ProblemsView::updateStatusLine);
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &ProblemsView::showSelectedProblem);
    updateStatusLine();
}

void ProblemsView::setListing(ProblemsListing listing) {
    std::set<std::string> families;
    for (const ProblemRow& row : listing.rows) {
        families.insert(row.problem.family);
    }
    const QString chosenFamily = familyCombo_->currentData().toString();
    {
        const QSignalBlocker blocker(familyCombo_);
        familyCombo_->clear();
        familyCombo_->addItem(tr("All families"), QString());
        for (const std::string& family : families) {
            familyCombo_->addItem(qs(family), qs(family));
        }
        const int keep = familyCombo_->findData(chosenFamily);
        familyCombo_->setCurrentIndex(keep < 0 ? 0 : keep);
    }
    filter_->setFamily(familyCombo_->currentData().toString());

    QStringList issueLines;
    for (const CatalogIssue& issue : listing.catalogIssues) {
        issueLines << QStringLiteral("%1: %2").arg(qs(issue.path.string()), qs(issue.message));
    }
    issuesText_ = qs(describeCatalogIssues(listing.catalogIssues));
    if (!listing.storeError.empty()) {
        issuesText_ += (issuesText_.isEmpty() ? QString() : QStringLiteral(" · ")) +
                       tr("project problems unreadable: %1").arg(qs(listing.storeError));
        issueLines << qs(listing.storeError);
    }
    issuesTooltip_ = issueLines.join(QLatin1Char('\n'));

    model_->setRows(std::move(listing.rows));
    if (!layoutRestored_) {
        table_->resizeColumnsToContents();
        const int widest = 260;
        for (int column = 0; column < model_->columnCount(); ++column) {
            table_->setColumnWidth(column, std::min(table_->columnWidth(column), widest));
        }
    }
    if (filter_->rowCount() > 0) {
        table_->selectRow(0);
    } else {
        showSelectedProblem();
    }
    updateStatusLine();
}

void ProblemsView::setLastGradings(std::map<ProblemKey, std::vector<LastGrading>> gradings) {
    model_->setLastGradings(std::move(gradings));
    showSelectedProblem();
}

void ProblemsView::showSelectedProblem() {
    const QModelIndex current = filter_->mapToSource(table_->selectionModel()->currentIndex());
    const ProblemRow* row = current.isValid() ? model_->rowAt(current.row()) : nullptr;
    if (!row) {
        detailsHeader_->setText(tr("Select a problem to see its reference source."));
        gradingLabel_->clear();
        sourceEditor_->clear();
        return;
    }
    const std::vector<LastGrading>& gradings = model_->lastGradingsOf(current.row());
    if (gradings.empty()) {
        gradingLabel_->setText(tr("<i>Last grading: no trial of this problem in the project yet.</i>"));
    } else {
        QString html = tr("<b>Last grading</b><table cellspacing=\"0\" cellpadding=\"2\">"
                          "<tr><th align=\"left\">DSL</th><th align=\"left\">Model</th>"
                          "<th align=\"left\">Trial</th><th align=\"left\">Result</th>"
                          "<th align=\"left\">Finished</th></tr>");
        for (const LastGrading& grading : gradings) {
            html += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td>%4</td><td>%5</td></tr>")
                        .arg(htmlEscaped(grading.dsl), htmlEscaped(grading.model), htmlEscaped(grading.coordinate),
                             htmlEscaped(describeGrading(grading)),
                             grading.finishedAt.empty() ? tr("not finished") : htmlEscaped(grading.finishedAt));
        }
        gradingLabel_->setText(html + QStringLiteral("</table>"));
    }
    const Problem& problem = row->problem;
    QStringList tags;
    for (const auto& tag : problem.meta.tags) {
        tags << htmlEscaped(tag);
    }
    QStringList solutions;
    for (const auto& dsl : row->solutionDsls) {
        solutions << htmlEscaped(dsl);
    }
    detailsHeader_->setText(tr("<b>%1</b> — %2<br>tags: %3 · solutions: %4<br><small>%5 · sha256 %6…</small>")
                                .arg(htmlEscaped(problem.name()), htmlEscaped(problem.title),
                                     tags.isEmpty() ? tr("none") : tags.join(QStringLiteral(", ")),
                                     solutions.isEmpty() ? tr("none") : solutions.join(QStringLiteral(", ")),
                                     htmlEscaped(problem.path.string()), qs(problem.fingerprint.substr(0, 12))));
    detailsHeader_->setToolTip(qs(problem.path.string()));
    sourceEditor_->setPlainText(qs(problem.source));
}

void ProblemsView::updateStatusLine() {
    QString text = tr("%1 of %2 problems").arg(filter_->rowCount()).arg(model_->rowCount());
    if (!issuesText_.isEmpty()) {
        text += QStringLiteral(" · ") + issuesText_;
    }
    statusLine_->setText(text);
    statusLine_->setToolTip(issuesTooltip_);
}

QByteArray ProblemsView::saveLayout() const {
    QByteArray layout;
    QDataStream stream(&layout, QIODevice::WriteOnly);
    stream << kLayoutMagic << splitter_->saveState() << table_->horizontalHeader()->saveState();
    return layout;
}

bool ProblemsView::restoreLayout(const QByteArray& layout) {
    QDataStream stream(layout);
    quint32 magic = 0;
    QByteArray splitterState;
    QByteArray headerState;
    stream >> magic >> splitterState >> headerState;
    if (stream.status() != QDataStream::Ok || magic != kLayoutMagic) {
        return false;
    }
    const bool splitterOk = splitter_->restoreState(splitterState);
    const bool headerOk = table_->horizontalHeader()->restoreState(headerState);
    if (headerOk) {
        // The header brings back its sort indicator; the rows follow it.
        table_->sortByColumn(table_->horizontalHeader()->sortIndicatorSection(),
                             table_->horizontalHeader()->sortIndicatorOrder());
    }
    layoutRestored_ = splitterOk && headerOk;
    return layoutRestored_;
}

} // namespace mkb::gui
