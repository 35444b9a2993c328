// Tests of the problems view's data side: ProblemsModel (under QAbstractItemModelTester), filter, sort, rows, TSV copy
// and the Python highlighter.
#include "gui_fixtures.h"

#include "gui/common/python_highlighter.h"
#include "gui/common/table_copy.h"
#include "gui/problems/problem_rows.h"
#include "gui/problems/problems_filter.h"
#include "gui/problems/problems_listing.h"
#include "gui/problems/problems_model.h"
#include "gui/problems/problems_view.h"

#include <QAbstractItemModelTester>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTextLayout>

using namespace mkb;
using namespace mkb::gui;

namespace {

QStringList column(const QAbstractItemModel& model, int col) {
    QStringList values;
    for (int row = 0; row < model.rowCount(); ++row) {
        values << model.index(row, col).data().toString();
    }
    return values;
}

Problem storedProblem(const std::string& suite, int number, const std::string& slug, const std::string& fingerprint) {
    Problem problem;
    problem.suite = suite;
    problem.number = number;
    problem.slug = slug;
    problem.family = "kv_cache";
    problem.title = "Stored " + slug;
    problem.fingerprint = fingerprint;
    return problem;
}

} // namespace

class ProblemsModelTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    QString suiteRoot_;

    ProblemsListing fixtureListing() const { return loadProblemsListing({suiteRoot_.toStdString()}, nullptr); }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        suiteRoot_ = dir_.filePath("suite");
        QVERIFY(mkbguitest::writeFixtureSuite(suiteRoot_));
    }

    void modelTesterAttachedBeforeLoading() {
        ProblemsModel model;
        ProblemsFilter filter;
        filter.setSourceModel(&model);
        QAbstractItemModelTester modelTester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester filterTester(&filter, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRows(fixtureListing().rows);
        QCOMPARE(model.rowCount(), 4);
        filter.setText("attention");
        filter.setFamily("moe");
        QCOMPARE(filter.rowCount(), 0);
        filter.setFamily("");
        filter.sort(ProblemsModel::TitleColumn, Qt::DescendingOrder);
        model.setRows({});
        QCOMPARE(filter.rowCount(), 0);
        model.setRows(fixtureListing().rows);
        QCOMPARE(filter.rowCount(), 2);
    }

    void rowsMatchTheCatalogWithSolutionStatus() {
        const Catalog catalog = loadCatalog({suiteRoot_.toStdString()});
        ProblemsModel model;
        model.setRows(fixtureListing().rows);
        QCOMPARE(model.rowCount(), int(catalog.problems.size()));
        QCOMPARE(column(model, ProblemsModel::NumberColumn), QStringList({"01", "02", "03", "04"}));
        QCOMPARE(column(model, ProblemsModel::FamilyColumn),
                 QStringList({"attention", "attention", "moe", "mlp_norm"}));
        QCOMPARE(column(model, ProblemsModel::TitleColumn).at(2), QString("Top-2 router with softmax"));
        QCOMPARE(column(model, ProblemsModel::TagsColumn).at(1), QString("reduction, mask"));
        QCOMPARE(column(model, ProblemsModel::SolutionsColumn), QStringList({"cuda, triton", "—", "cuda", "—"}));
        QCOMPARE(model.rowAt(0)->solutionDsls, std::vector<std::string>({"cuda", "triton"}));
        QVERIFY(model.index(0, ProblemsModel::SolutionsColumn)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains("tirx: no solution"));
    }

    void textFilterNarrowsRowsAndEveryWordMustMatch() {
        ProblemsModel model;
        ProblemsFilter filter;
        filter.setSourceModel(&model);
        model.setRows(fixtureListing().rows);
        QCOMPARE(filter.rowCount(), 4);
        filter.setText("ATTENTION");
        QCOMPARE(filter.rowCount(), 2);
        filter.setText("reduction");
        QCOMPARE(filter.rowCount(), 2);
        filter.setText("attention reduction");
        QCOMPARE(filter.rowCount(), 1);
        QCOMPARE(filter.index(0, ProblemsModel::SlugColumn).data().toString(), QString("sliding_window"));
        filter.setText("p03");
        QCOMPARE(filter.rowCount(), 1);
        filter.setText("triton");
        QCOMPARE(filter.rowCount(), 1);
        filter.setText("no-such-thing");
        QCOMPARE(filter.rowCount(), 0);
        filter.setText("  ");
        QCOMPARE(filter.rowCount(), 4);
    }

    void familyFilterNarrowsRows() {
        ProblemsModel model;
        ProblemsFilter filter;
        filter.setSourceModel(&model);
        model.setRows(fixtureListing().rows);
        filter.setFamily("attention");
        QCOMPARE(column(filter, ProblemsModel::NumberColumn), QStringList({"01", "02"}));
        filter.setText("window");
        QCOMPARE(filter.rowCount(), 1);
        filter.setFamily("moe");
        QCOMPARE(filter.rowCount(), 0);
    }

    void sortByNumberAndByTitle() {
        ProblemsModel model;
        ProblemsFilter filter;
        filter.setSourceModel(&model);
        model.setRows(fixtureListing().rows);
        filter.sort(ProblemsModel::NumberColumn, Qt::DescendingOrder);
        QCOMPARE(column(filter, ProblemsModel::NumberColumn), QStringList({"04", "03", "02", "01"}));
        filter.sort(ProblemsModel::TitleColumn, Qt::AscendingOrder);
        QCOMPARE(column(filter, ProblemsModel::NumberColumn), QStringList({"04", "01", "02", "03"}));
        filter.sort(ProblemsModel::SolutionsColumn, Qt::DescendingOrder);
        QCOMPARE(filter.index(0, ProblemsModel::NumberColumn).data().toString(), QString("01"));
    }

    void catalogIssuesAreDescribedForTheStatusLine() {
        const ProblemsListing listing = fixtureListing();
        QVERIFY(!listing.catalogIssues.empty());
        const QString text = QString::fromStdString(describeCatalogIssues(listing.catalogIssues));
        QVERIFY2(text.startsWith("1 malformed file: 05_broken.py ("), qPrintable(text));

        std::vector<CatalogIssue> many;
        for (int i = 0; i < 5; ++i) {
            many.push_back({std::filesystem::path("/x/f" + std::to_string(i) + ".py"), "bad"});
        }
        QCOMPARE(QString::fromStdString(describeCatalogIssues(many, 2)),
                 QString("5 malformed files: f0.py (bad); f1.py (bad); and 3 more"));
        QVERIFY(describeCatalogIssues({}).empty());

        ProblemsView view;
        view.setListing(fixtureListing());
        QVERIFY2(view.statusLine()->text().contains("4 of 4 problems · 1 malformed file: 05_broken.py"),
                 qPrintable(view.statusLine()->text()));
    }

    void storedProblemsNotInTheSuiteAreAddedOnceAtTheirLatestVersion() {
        const Catalog catalog = loadCatalog({suiteRoot_.toStdString()});
        std::vector<Problem> stored = {
            storedProblem("suite", 1, "gqa_decode", "old-version-of-a-shipped-problem"),
            storedProblem("metakernelbench", 7, "paged_write", "v1"),
            storedProblem("metakernelbench", 7, "paged_write", "v2"),
        };
        stored.push_back(catalog.problems[2]); // same fingerprint as a shipped problem
        stored.back().suite = "copy";
        const std::vector<ProblemRow> rows = buildProblemRows(catalog, stored);
        QCOMPARE(int(rows.size()), 5);
        QCOMPARE(rows.back().problem.fingerprint, std::string("v2"));
        QVERIFY(rows.back().origin == ProblemOrigin::ProjectStore);
        QVERIFY(rows.front().origin == ProblemOrigin::ShippedSuite);
    }

    void selectedRowsCopyAsTsvWithHeader() {
        ProblemsView view;
        view.setListing(fixtureListing());
        QTableView* table = view.table();
        table->clearSelection();
        QCOMPARE(selectedRowsAsTsv(*table), QString());
        table->selectionModel()->select(view.filter()->index(2, 0),
                                        QItemSelectionModel::Select | QItemSelectionModel::Rows);
        table->selectionModel()->select(view.filter()->index(0, 0),
                                        QItemSelectionModel::Select | QItemSelectionModel::Rows);
        const QStringList lines = selectedRowsAsTsv(*table).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 3);
        QCOMPARE(lines[0], QString("No.\tFamily\tSlug\tTitle\tTags\tSolutions\tLast grading\tSuite"));
        QCOMPARE(lines[1], QString("01\tattention\tgqa_decode\tGrouped-query attention decode\tgather\tcuda, "
                                   "triton\t—\tsuite"));
        QVERIFY(lines[2].startsWith("03\tmoe\ttopk_router\t"));
    }

    void selectingARowShowsItsSource() {
        ProblemsView view;
        view.setListing(fixtureListing());
        QVERIFY(view.sourceEditor()->toPlainText().startsWith("\"\"\"Grouped-query attention decode\"\"\""));
        view.table()->selectRow(2);
        QVERIFY(view.sourceEditor()->toPlainText().startsWith("\"\"\"Top-2 router with softmax\"\"\""));
        QVERIFY(view.sourceEditor()->isReadOnly());
    }

    void pythonHighlighterPaintsKeywordsStringsAndComments() {
        QPlainTextEdit editor;
        auto* highlighter = new PythonHighlighter(editor.document());
        editor.setPlainText(
            "def f(x):  # say \"hi\"\n    s = '#not a comment'\n    \"\"\"open\nstill string\"\"\" + 1\n");
        auto colourAt = [&](int blockNumber, int position) {
            const QTextBlock block = editor.document()->findBlockByNumber(blockNumber);
            for (const QTextLayout::FormatRange& range : block.layout()->formats()) {
                if (position >= range.start && position < range.start + range.length) {
                    return range.format.foreground().color();
                }
            }
            return QColor();
        };
        using Kind = PythonHighlighter::Kind;
        const QColor keyword = highlighter->formatFor(Kind::Keyword).foreground().color();
        const QColor comment = highlighter->formatFor(Kind::Comment).foreground().color();
        const QColor string = highlighter->formatFor(Kind::String).foreground().color();
        const QColor definition = highlighter->formatFor(Kind::Definition).foreground().color();
        QCOMPARE(colourAt(0, 0), keyword);    // def
        QCOMPARE(colourAt(0, 4), definition); // f
        QCOMPARE(colourAt(0, 16), comment);   // "hi" inside a comment stays comment
        QCOMPARE(colourAt(1, 10), string);    // '#not a comment' is a string
        QCOMPARE(colourAt(3, 2), string);     // inside the triple-quoted string's second line
        QCOMPARE(colourAt(3, 18), QColor(highlighter->formatFor(Kind::Number).foreground().color())); // 1
        QVERIFY(colourAt(0, 6) != keyword);                                                           // x

        // CUDA kept in a multi-line string is highlighted as CUDA; a one-line string is left alone.
        editor.setPlainText(
            "SRC = r\"\"\"\n__global__ void k(float* y) {\n    y[threadIdx.x] = 0;  // zero\n}\n\"\"\"\n"
            "name = \"float\"\n");
        const QColor cudaKeyword = highlighter->formatFor(Kind::CudaKeyword).foreground().color();
        const QColor cudaBuiltin = highlighter->formatFor(Kind::CudaBuiltin).foreground().color();
        QVERIFY(cudaKeyword != string && cudaBuiltin != string);
        QCOMPARE(colourAt(1, 0), cudaKeyword);  // __global__
        QCOMPARE(colourAt(1, 11), cudaKeyword); // void
        QCOMPARE(colourAt(1, 16), string);      // k: plain code inside the string stays string
        QCOMPARE(colourAt(2, 6), cudaBuiltin);  // threadIdx
        QCOMPARE(colourAt(2, 26), comment);     // // zero
        QCOMPARE(colourAt(5, 9), string);       // "float" in a one-line Python string
    }
};

QTEST_MAIN(ProblemsModelTest)
#include "tst_problems_model.moc"
