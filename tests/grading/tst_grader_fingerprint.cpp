// grading: the fingerprint computed in C++ equals the one the Python grader reports about itself.
#include "core/grader_client/grader_fingerprint.h"
#include "core/util/paths.h"
#include "support/testpaths.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>

class TestGraderFingerprint : public QObject {
    Q_OBJECT

private slots:
    void cppFingerprintEqualsPythonFingerprint() {
        auto cpp = mkb::graderFingerprintOf(mkb::graderPackageDir());
        QVERIFY2(cpp.ok(), cpp.ok() ? "" : cpp.error().message.c_str());
        QProcess python;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert("PYTHONPATH", QString::fromStdString(mkb::graderPackageDir().string()));
        python.setProcessEnvironment(environment);
        python.start(QString::fromStdString(mkbtest::testPython()),
                     {"-c", "from mkbgrader.fingerprint import grader_fingerprint; print(grader_fingerprint())"});
        QVERIFY(python.waitForFinished(60000));
        QCOMPARE(python.exitCode(), 0);
        QCOMPARE(QString::fromUtf8(python.readAllStandardOutput()).trimmed(), QString::fromStdString(*cpp));
    }

    void fingerprintChangesWhenASourceChanges() {
        QTemporaryDir dir;
        const std::filesystem::path root = dir.path().toStdString();
        std::filesystem::create_directories(root / "mkbgrader" / "__pycache__");
        std::ofstream(root / "mkbgrader" / "a.py") << "x = 1\n";
        std::ofstream(root / "mkbgrader" / "__pycache__" / "a.cpython.pyc") << "ignored";
        auto before = mkb::graderFingerprintOf(root);
        QVERIFY(before.ok());
        std::ofstream(root / "mkbgrader" / "__pycache__" / "b.pyc") << "still ignored";
        QCOMPARE(*mkb::graderFingerprintOf(root), *before);
        std::ofstream(root / "mkbgrader" / "a.py") << "x = 2\n";
        QVERIFY(*mkb::graderFingerprintOf(root) != *before);
    }

    void aMissingPackageIsOneClearError() {
        auto missing = mkb::graderFingerprintOf("/nonexistent/grader");
        QVERIFY(!missing.ok());
        QVERIFY(missing.error().message.find("/nonexistent/grader/mkbgrader") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestGraderFingerprint)
#include "tst_grader_fingerprint.moc"
