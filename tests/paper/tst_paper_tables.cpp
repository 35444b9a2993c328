// The paper build's tables are built in this process by the report model, and are byte for byte what the mkb
// binary's `mkb report` writes for the same arguments, in every format; a bad argument names its table.
#include "gui/paper/paper_build.h"
#include "gui/paper/paper_table.h"

#include "gui/tst_project_data_fixture.h"
#include "support/cli_run.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace mkb::gui;

namespace {

QByteArray readAll(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

/// One table of the manifest the test writes: the report's arguments, its format and its file.
struct Table {
    QStringList report;
    QString format;
    QString output;
};

const QList<Table> kTables = {
    {{}, QStringLiteral("latex"), QStringLiteral("tables/default.tex")},
    {{QStringLiteral("--split"), QStringLiteral("direction")}, QStringLiteral("md"), QStringLiteral("tables/split.md")},
    {{QStringLiteral("--metrics=ladder,transfer,standing,reverse,usage"), QStringLiteral("--unclipped"),
      QStringLiteral("--delta"), QStringLiteral("0.1")},
     QStringLiteral("csv"),
     QStringLiteral("tables/metrics.csv")},
    {{QStringLiteral("--thresholds"), QStringLiteral("0,1,2"), QStringLiteral("--timing"), QStringLiteral("unpaired"),
      QStringLiteral("--model"), QStringLiteral("alpha"), QStringLiteral("--split=family")},
     QStringLiteral("json"),
     QStringLiteral("tables/alpha.json")},
    {{QStringLiteral("--direction"), QStringLiteral("triton2cuda"), QStringLiteral("--metrics"),
      QStringLiteral("all,directions")},
     QStringLiteral("md"),
     QStringLiteral("tables/all.md")},
};

/// Writes a manifest of kTables against store into folder; returns its path.
QString writeManifest(const QString& folder, const QString& store) {
    QJsonArray tables;
    for (const Table& table : kTables) {
        tables.append(QJsonObject{
            {"report", QJsonArray::fromStringList(table.report)}, {"format", table.format}, {"output", table.output}});
    }
    const QString path = QDir(folder).filePath(QStringLiteral("manifest.json"));
    QFile file(path);
    if (file.open(QIODevice::WriteOnly)) {
        file.write(QJsonDocument(QJsonObject{{"store", store}, {"tables", tables}}).toJson());
    }
    return path;
}

} // namespace

class PaperTablesTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        store_ = dir_.filePath(QStringLiteral("study.sqlite"));
        mkbguitest::writeTransferFixture(store_.toStdString());
        QVERIFY(QFileInfo(QString::fromStdString(mkbtest::cliPath())).isExecutable());
    }

    void everyTableIsByteForByteWhatMkbReportWrites() {
        const QString folder = dir_.filePath(QStringLiteral("paper"));
        QVERIFY(QDir().mkpath(folder));
        mkb::Result<paper::PaperManifest> manifest = paper::readPaperManifest(writeManifest(folder, store_));
        QVERIFY2(manifest, manifest ? "" : manifest.error().message.c_str());
        mkb::Result<paper::PaperBuildSummary> built = paper::buildPaper(*manifest, {});
        QVERIFY2(built, built ? "" : built.error().message.c_str());
        QCOMPARE(built->written.size(), kTables.size());
        for (const Table& table : kTables) {
            const QString ours = QDir(folder).filePath(table.output);
            const QString theirs = dir_.filePath(QStringLiteral("cli-") + QFileInfo(table.output).fileName());
            const mkbtest::CliRun ran = mkbtest::runMkbIn(
                QStringList{QStringLiteral("report"), QStringLiteral("--store"), store_, QStringLiteral("--format"),
                            table.format, QStringLiteral("--output"), theirs} +
                    table.report,
                dir_.filePath(QStringLiteral("unused.sqlite")));
            QVERIFY2(ran.exitCode == 0, qPrintable(table.output + ": " + ran.err));
            const QByteArray expected = readAll(theirs);
            QVERIFY2(expected.size() > 100, qPrintable(table.output + " is nearly empty"));
            QVERIFY2(readAll(ours) == expected, qPrintable(table.output + " differs from mkb report's"));
        }
    }

    void argumentsAreReadAsTheVerbReadsThem() {
        mkb::Result<mkb::report::ReportOptions> options = paper::reportOptionsFromArguments(
            {QStringLiteral("--unclipped"), QStringLiteral("--delta=0.2"), QStringLiteral("--boundary"),
             QStringLiteral("legacy"), QStringLiteral("--family"), QStringLiteral("softmax")});
        QVERIFY2(options, options ? "" : options.error().message.c_str());
        QVERIFY(!options->settings.clipEffectiveSpeedup);
        QCOMPARE(options->settings.delta, 0.2);
        QCOMPARE(options->boundary.value_or(""), std::string("legacy"));
        QCOMPARE(options->family.value_or(""), std::string("softmax"));
        const auto refused = [](const QStringList& arguments, const char* said) {
            mkb::Result<mkb::report::ReportOptions> read = paper::reportOptionsFromArguments(arguments);
            return !read && read.error().message.find(said) != std::string::npos;
        };
        QVERIFY(refused({QStringLiteral("--delta"), QStringLiteral("-1")}, "--delta takes a number of at least 0"));
        QVERIFY(refused({QStringLiteral("--model"), QStringLiteral("a"), QStringLiteral("--model=b")}, "twice"));
        QVERIFY(refused({QStringLiteral("--unclipped=yes")}, "takes no value"));
        QVERIFY(refused({QStringLiteral("--split")}, "needs a value"));
        QVERIFY(refused({QStringLiteral("--colour"), QStringLiteral("red")}, "unknown option '--colour'"));
        QVERIFY(refused({QStringLiteral("ladder")}, "no positional argument"));
        QVERIFY(refused({QStringLiteral("--direction"), QStringLiteral("sideways")}, "not a direction"));
        QVERIFY(refused({QStringLiteral("--golden"), QStringLiteral("/tmp")}, "only by --metrics kbx-portability"));
        QVERIFY(refused({QStringLiteral("--store"), QStringLiteral("other.sqlite")}, "set by the paper manifest"));
    }

    void aBadArgumentNamesItsTableAndWritesNothing() {
        const QString folder = dir_.filePath(QStringLiteral("bad"));
        QVERIFY(QDir().mkpath(folder));
        paper::PaperManifest manifest;
        manifest.folder = folder;
        manifest.store = store_;
        manifest.provenance = QDir(folder).filePath(QStringLiteral("provenance.json"));
        manifest.tables.push_back(
            {{QStringLiteral("--metrics"), QStringLiteral("nonsense")}, QStringLiteral("md"), folder + "/t.md"});
        mkb::Result<paper::PaperBuildSummary> built = paper::buildPaper(manifest, {});
        QVERIFY(!built);
        QVERIFY2(QString::fromStdString(built.error().message).contains(QStringLiteral("table 1 (t.md)")) &&
                     QString::fromStdString(built.error().message).contains(QStringLiteral("nonsense")),
                 built.error().message.c_str());
        QVERIFY(!QFileInfo::exists(folder + "/t.md"));
    }

private:
    QTemporaryDir dir_;
    QString store_;
};

QTEST_MAIN(PaperTablesTest)
#include "tst_paper_tables.moc"
