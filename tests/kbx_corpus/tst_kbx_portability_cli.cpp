// mkb report --metrics kbx-portability --golden DIR as a process: golden folders in KernelBench-X's list form and in
// the form bench/kbx_golden_timing.py writes, each GPU against ours, the spread, identical folders, and each bad
// input refused with the file or option named.
#include "core/store/store.h"
#include "support/cli_run.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace mkb;
using mkbtest::CliRun;

class KbxPortabilityCliTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString store_;
    QString golden_;

    CliRun runMkb(const QStringList& args) { return mkbtest::runMkbIn(args, dir_.filePath("never-used.sqlite")); }

    void write(const QString& relative, const QByteArray& text) {
        const QString path = golden_ + "/" + relative;
        QVERIFY(QDir().mkpath(QFileInfo(path).absolutePath()));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write(text);
    }

    QStringList reportArgs() const {
        return {"report", "--store", store_, "--metrics", "kbx-portability", "--golden", golden_, "--format", "csv"};
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        store_ = dir_.filePath("empty.sqlite");
        QVERIFY(static_cast<bool>(Store::open(store_.toStdString(), OpenMode::CreateIfMissing)));
        golden_ = dir_.filePath("golden");
        // add at sizes [1] and [2]: 4090 4 and 8 ms, h800 2 and 4 ms, ours 1 and 2 ms; h800 is a copy of 4090 for
        // abs. Largest common size [2]: 4090 / h200 = 4, h800 / h200 = 2; abs: 3 / 1.5 = 2 both.
        write("4090/add.json", R"([{"input_size": [[1]], "ms": 4.0}, {"input_size": [[2]], "ms": 8.0}])");
        write("h800/add.json", R"([{"input_size": [[1]], "ms": 2.0}, {"input_size": [[2]], "ms": 4.0}])");
        write("4090/abs.json", R"([{"input_size": [[7]], "ms": 3.0, "GB/s": 1.0}])");
        write("h800/abs.json", R"([{"input_size": [[7]], "ms": 3.0, "GB/s": 1.0}])");
        write("h200/add.json", R"({"task": "Math/add", "device": "h200", "results": [
                {"input_size": [[1]], "ms": 1.0}, {"input_size": [[2]], "ms": 2.0}]})");
        write("h200/abs.json", R"({"task": "Math/abs", "results": [{"input_size": [[7]], "ms": 1.5}]})");
        write("h200/_failures.json", R"({"relu": "RuntimeError: out of memory"})");
    }

    void eachGpuAgainstOursAndTheSpread() {
        const CliRun report = runMkb(reportArgs());
        QVERIFY2(report.exitCode == 0, qPrintable(report.err + report.out));
        // 4090: ratios 4 (add) and 2 (abs): GM 2.828; h800: 2 and 2: GM 2.000; neither is faster on any op.
        QVERIFY2(report.out.contains("4090,2,2.828,"), qPrintable(report.out));
        QVERIFY2(report.out.contains("h800,2,2.000,2.000,2.000,0,"), qPrintable(report.out));
        // spread per op: add 8 / 2 = 4, abs 3 / 1.5 = 2: GM 2.828; the widest is add.
        QVERIFY2(report.out.contains("max/min across all 3 GPUs (GM),2,2.828,"), qPrintable(report.out));
        QVERIFY2(report.out.contains("widest: add 4.00x (4090 over h200)"), qPrintable(report.out));
        QVERIFY2(report.out.contains("add,Math/add,[[2]],8.0000,4.0000,2.0000,4.00,h200,4090"), qPrintable(report.out));
        QVERIFY2(report.out.contains("4090 and h800 hold identical timings (every size, every ms) for 1 of the 2"),
                 qPrintable(report.out));
    }

    // docs/kernelbenchx-golden/h200 as shipped: every file reads, and a published folder at twice its times (in
    // KernelBench-X's list form) lines up with it op by op at the same sizes.
    void theShippedH200TimingsRead() {
        const QString shipped = qEnvironmentVariable("MKB_SOURCE_DIR") + "/docs/kernelbenchx-golden/h200";
        const QStringList files = QDir(shipped).entryList({"*.json"}, QDir::Files);
        QStringList ops;
        for (const QString& name : files) {
            if (!name.startsWith('_')) {
                ops << name;
            }
        }
        QCOMPARE(ops.size(), 177);
        const QString golden = dir_.filePath("shipped");
        QVERIFY(QDir().mkpath(golden + "/h200") && QDir().mkpath(golden + "/4090"));
        for (const QString& name : ops) {
            QVERIFY(QFile::copy(shipped + "/" + name, golden + "/h200/" + name));
            QFile in(shipped + "/" + name);
            QVERIFY(in.open(QIODevice::ReadOnly));
            QJsonArray doubled;
            for (const QJsonValue& entry : QJsonDocument::fromJson(in.readAll()).object()["results"].toArray()) {
                QJsonObject row = entry.toObject();
                row["ms"] = 2 * row["ms"].toDouble();
                doubled.append(row);
            }
            QFile out(golden + "/4090/" + name);
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(QJsonDocument(doubled).toJson());
        }
        const CliRun report = runMkb(
            {"report", "--store", store_, "--metrics", "kbx-portability", "--golden", golden, "--format", "csv"});
        QVERIFY2(report.exitCode == 0, qPrintable(report.err + report.out));
        QVERIFY2(report.out.contains("4090,177,2.000,2.000,2.000,0,"), qPrintable(report.out));
    }

    void badInputIsNamed() {
        const CliRun noGolden = runMkb({"report", "--store", store_, "--metrics", "kbx-portability"});
        QCOMPARE(noGolden.exitCode, 2);
        QVERIFY2(noGolden.err.contains("needs --golden DIR"), qPrintable(noGolden.err));
        const CliRun strayGolden = runMkb({"report", "--store", store_, "--golden", golden_});
        QCOMPARE(strayGolden.exitCode, 2);
        QVERIFY2(strayGolden.err.contains("--golden is read only by --metrics kbx-portability"),
                 qPrintable(strayGolden.err));

        write("h800/cut.json", R"([{"input_size": [[1]], "ms": 2.0}, {"input_size")");
        CliRun cut = runMkb(reportArgs());
        QCOMPARE(cut.exitCode, 4);
        QVERIFY2(cut.err.contains("h800/cut.json"), qPrintable(cut.err));
        QVERIFY(QFile::remove(golden_ + "/h800/cut.json"));

        write("h800/zero.json", R"([{"input_size": [[1]], "ms": 0}])");
        CliRun zero = runMkb(reportArgs());
        QCOMPARE(zero.exitCode, 4);
        QVERIFY2(zero.err.contains("h800/zero.json: entry 1 has no positive, finite ms"), qPrintable(zero.err));
        QVERIFY(QFile::remove(golden_ + "/h800/zero.json"));

        write("b200/add.json", R"([{"input_size": [[1]], "ms": 1.0}])");
        CliRun two = runMkb(reportArgs());
        QCOMPARE(two.exitCode, 4);
        QVERIFY2(two.err.contains("more than one folder besides KernelBench-X's six GPUs (b200, h200)"),
                 qPrintable(two.err));
        QVERIFY(QDir(golden_ + "/b200").removeRecursively());

        const CliRun again = runMkb(reportArgs()); // nothing was lost: the same report as before
        QVERIFY2(again.exitCode == 0 && again.out.contains("h800,2,2.000,2.000,2.000,0,"), qPrintable(again.err));
    }
};

QTEST_MAIN(KbxPortabilityCliTest)
#include "tst_kbx_portability_cli.moc"
