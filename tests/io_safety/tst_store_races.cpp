// io safety: real processes racing on one store. Readers of a store that a writer is filling (and checkpointing)
// never get a false "truncated", and two processes creating the same store both succeed.
#include "io_safety_fixtures.h"

#include <QCoreApplication>
#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

using namespace iosafety;

namespace {

/// The writer process: fills the store with problems of 16 KiB each, 32 per transaction, and checkpoints after each
/// commit (so the store file keeps growing under readers), until the stop file appears or time runs out.
int runWriter(const fs::path& store, const fs::path& stopFile) {
    auto opened = mkb::Store::open(store, mkb::OpenMode::MustExist);
    if (!opened) {
        std::fprintf(stderr, "writer: %s\n", opened.error().message.c_str());
        return 2;
    }
    mkb::Store& writer = **opened;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    int number = 1;
    while (!fs::exists(stopFile) && std::chrono::steady_clock::now() < deadline) {
        mkb::Status written = writer.transaction([&]() -> mkb::Status {
            for (int i = 0; i < 32; ++i, ++number) {
                mkb::Problem problem;
                problem.suite = "race";
                problem.number = number;
                problem.slug = "p" + std::to_string(number);
                problem.family = "race";
                problem.source = std::string(16384, char('a' + number % 26));
                problem.fingerprint = "fp" + std::to_string(number);
                if (auto id = writer.upsertProblem(problem); !id) {
                    return id.error();
                }
            }
            return mkb::Ok{};
        });
        if (!written) {
            std::fprintf(stderr, "writer: %s\n", written.error().message.c_str());
            return 3;
        }
        sqlite3_wal_checkpoint_v2(writer.handle(), nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    }
    return 0;
}

QString selfPath;

} // namespace

class StoreRacesTest : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<QTemporaryDir> dir_;
    fs::path at(const std::string& name) const { return fs::path(dir_->path().toStdString()) / name; }
    static QString q(const fs::path& path) { return QString::fromStdString(path.string()); }

private slots:
    void init() {
        dir_ = std::make_unique<QTemporaryDir>();
        QVERIFY(dir_->isValid());
    }

    void readersRacingACheckpointingWriterNeverSeeAFalseTruncation() {
        const fs::path store = at("busy.sqlite");
        QVERIFY(writeStore(store, 2, 10));
        QProcess writer;
        writer.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        writer.start(selfPath, {"--write", q(store), q(at("stop"))});
        QVERIFY(writer.waitForStarted(10000));
        // Let it get going: the store grows under the readers.
        for (int i = 0; i < 100 && rowCount(store, "problems") < 200; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        int failures = 0;
        QString firstFailure;
        for (int round = 0; round < 50; ++round) {
            const QStringList verb = round % 5 == 4 ? QStringList{"report", "--store", q(store)}
                                                    : QStringList{"db", "info", "--store", q(store)};
            const CliRun run = runMkb(verb);
            if (run.exitCode != 0) {
                ++failures;
                firstFailure = firstFailure.isEmpty() ? QString::number(run.exitCode) + ": " + run.err : firstFailure;
            }
        }
        writeBytes(at("stop"), "");
        QVERIFY(writer.waitForFinished(60000));
        QCOMPARE(writer.exitCode(), 0);
        QVERIFY2(failures == 0, qPrintable(QString::number(failures) + " of 50 reads failed, first " + firstFailure));
        QVERIFY(rowCount(store, "problems") > 200);
        QCOMPARE(runMkb({"db", "check", "--store", q(store)}).exitCode, 0);
    }

    void twoProcessesCreatingOneStoreAtOnceBothSucceed() {
        for (int round = 0; round < 30; ++round) {
            const fs::path store = at("new-" + std::to_string(round) + ".sqlite");
            QProcess first;
            QProcess second;
            for (QProcess* process : {&first, &second}) {
                QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
                environment.remove("MKB_STORE");
                process->setProcessEnvironment(environment);
            }
            first.start(QString::fromStdString(mkbtest::cliPath()), {"db", "init", "--store", q(store)});
            second.start(QString::fromStdString(mkbtest::cliPath()), {"db", "init", "--store", q(store)});
            QVERIFY(first.waitForFinished(60000) && second.waitForFinished(60000));
            const QString errors = QString::fromUtf8(first.readAllStandardError() + second.readAllStandardError());
            QVERIFY2(first.exitCode() == 0 && second.exitCode() == 0,
                     qPrintable("round " + QString::number(round) + ": " + errors));
            const CliRun check = runMkb({"db", "check", "--store", q(store)});
            QVERIFY2(check.exitCode == 0, qPrintable(check.err));
        }
    }
};

int main(int argc, char** argv) {
    if (argc == 4 && std::strcmp(argv[1], "--write") == 0) {
        return runWriter(argv[2], argv[3]);
    }
    QCoreApplication app(argc, argv);
    selfPath = QCoreApplication::applicationFilePath();
    StoreRacesTest test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_store_races.moc"
