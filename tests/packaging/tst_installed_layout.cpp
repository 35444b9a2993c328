// How an installed binary finds its data: <bindir>/../share/mkb when that holds resources/dsls, else nothing.
#include "core/util/paths.h"

#include <QTemporaryDir>
#include <QTest>

#include <fstream>

namespace fs = std::filesystem;

class InstalledLayoutTest : public QObject {
    Q_OBJECT

private slots:
    void dataBesideTheBinaryIsFound() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const fs::path prefix = fs::path(dir.path().toStdString()) / "opt" / "mkb";
        fs::create_directories(prefix / "bin");
        fs::create_directories(prefix / "share" / "mkb" / "resources" / "dsls");
        std::ofstream(prefix / "bin" / "mkb") << "";
        QCOMPARE(QString::fromStdString(mkb::installedDataDirBeside(prefix / "bin" / "mkb").string()),
                 QString::fromStdString((prefix / "share" / "mkb").string()));
    }

    void aBuildTreeBinaryHasNoInstalledData() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const fs::path build = fs::path(dir.path().toStdString()) / "build" / "app";
        fs::create_directories(build);
        // share/mkb without resources/dsls is not an installed data folder (a stray or partial tree).
        fs::create_directories(build.parent_path() / "share" / "mkb" / "problems");
        QVERIFY(mkb::installedDataDirBeside(build / "mkb").empty());
        QVERIFY(mkb::installedDataDirBeside({}).empty());
    }

    void mkbDataDirStillWins() {
        qputenv("MKB_DATA_DIR", "/nonexistent/mkb-data");
        QCOMPARE(QString::fromStdString(mkb::dataDir().string()), QStringLiteral("/nonexistent/mkb-data"));
        QCOMPARE(QString::fromStdString(mkb::graderPackageDir().string()),
                 QStringLiteral("/nonexistent/mkb-data/grader"));
        qunsetenv("MKB_DATA_DIR");
        // This test binary lives in the build tree: the source tree's data is used.
        QVERIFY(fs::is_directory(mkb::resourcesDir() / "dsls"));
    }
};

QTEST_GUILESS_MAIN(InstalledLayoutTest)
#include "tst_installed_layout.moc"
