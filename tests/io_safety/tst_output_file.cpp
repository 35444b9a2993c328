// io safety: output files (--output, --json, --table) are written atomically, through symbolic links, never over a
// directory, FIFO, device or the store, and a lost standard output is an error, not exit 0.
#include "io_safety_fixtures.h"

#include "core/util/output_file.h"

#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <set>

using namespace iosafety;

class OutputFileTest : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<QTemporaryDir> dir_; // a fresh folder per test
    fs::path at(const std::string& name) const { return fs::path(dir_->path().toStdString()) / name; }
    QString q(const fs::path& path) const { return QString::fromStdString(path.string()); }

    /// Only the named entries are in the temporary folder (no temporary file was left behind).
    bool folderHoldsOnly(std::set<std::string> names) const {
        for (const auto& entry : fs::directory_iterator(at(""))) {
            if (names.erase(entry.path().filename().string()) == 0) {
                qWarning("unexpected file %s", entry.path().c_str());
                return false;
            }
        }
        return names.empty();
    }

    fs::path storeWithRows() {
        const fs::path store = at("project.sqlite");
        if (!fs::exists(store)) {
            writeStore(store, 2, 20);
        }
        return store;
    }

private slots:
    void init() {
        dir_ = std::make_unique<QTemporaryDir>();
        QVERIFY(dir_->isValid());
    }

    void aNewFileIsWrittenAndAnOldOneReplacedKeepingItsPermissions() {
        const fs::path path = at("report.md");
        QVERIFY(mkb::writeOutputFile(path, "first\n"));
        QCOMPARE(fileBytes(path), std::string("first\n"));
        QVERIFY(::chmod(path.c_str(), 0640) == 0);
        QVERIFY(mkb::writeOutputFile(path, "second\n"));
        QCOMPARE(fileBytes(path), std::string("second\n"));
        struct stat info {};
        QVERIFY(::stat(path.c_str(), &info) == 0);
        QCOMPARE(info.st_mode & 07777, mode_t(0640));
        QVERIFY(folderHoldsOnly({"report.md"}));
    }

    void aSymbolicLinkIsWrittenThroughAndStaysALink() {
        fs::create_directories(at("real"));
        writeBytes(at("real/target.md"), "old\n");
        fs::create_symlink("real/target.md", at("link.md"));
        QVERIFY(mkb::writeOutputFile(at("link.md"), "new\n"));
        QVERIFY(fs::is_symlink(at("link.md")));
        QCOMPARE(fileBytes(at("real/target.md")), std::string("new\n"));
        // A dangling link is written through too: its target is created.
        fs::create_symlink("real/fresh.md", at("dangling.md"));
        QVERIFY(mkb::writeOutputFile(at("dangling.md"), "fresh\n"));
        QVERIFY(fs::is_symlink(at("dangling.md")));
        QCOMPARE(fileBytes(at("real/fresh.md")), std::string("fresh\n"));
        QVERIFY(folderHoldsOnly({"real", "link.md", "dangling.md"}));
    }

    void aDirectoryIsRefusedWithAClearMessageNeverSuccess() {
        fs::create_directories(at("out"));
        const mkb::Status written = mkb::writeOutputFile(at("out"), "x", {"--output", {}});
        QVERIFY(!written);
        const std::string& message = written.error().message;
        QVERIFY2(message.find("--output " + at("out").string() + " is a directory; name a file") == 0, message.c_str());
        QVERIFY2(message.find("Success") == std::string::npos, message.c_str());
        QVERIFY(fs::is_directory(at("out")) && fs::is_empty(at("out")));
    }

    void aFifoADeviceAndALinkToADeviceAreRefusedUntouched() {
        QVERIFY(::mkfifo(at("pipe").c_str(), 0600) == 0);
        fs::create_symlink("/dev/full", at("full-link"));
        for (const fs::path& path : {at("pipe"), fs::path("/dev/null"), fs::path("/dev/full"), at("full-link")}) {
            const mkb::Status written = mkb::writeOutputFile(path, "x");
            QVERIFY2(!written, path.c_str());
            QVERIFY2(written.error().message.find("not a regular file") != std::string::npos,
                     written.error().message.c_str());
        }
        struct stat info {};
        QVERIFY(::lstat(at("pipe").c_str(), &info) == 0 && S_ISFIFO(info.st_mode));
        QVERIFY(::stat("/dev/full", &info) == 0 && S_ISCHR(info.st_mode));
        QVERIFY(fs::is_symlink(at("full-link")));
    }

    void theStoreAndItsSideFilesAreRefusedAlsoThroughLinks() {
        const fs::path store = storeWithRows();
        const std::string before = fileBytes(store);
        fs::create_symlink(store, at("store-link"));
        fs::create_hard_link(store, at("store-hard"));
        const mkb::OutputRules rules{"--output", mkb::storeFiles(store)};
        for (const fs::path& path : {store, at("store-link"), at("store-hard"), besides(store, "-wal")}) {
            const mkb::Status written = mkb::writeOutputFile(path, "x", rules);
            QVERIFY2(!written, path.c_str());
            QVERIFY2(written.error().message.find("project store") != std::string::npos,
                     written.error().message.c_str());
        }
        QCOMPARE(fileBytes(store), before);
        QVERIFY(!fs::exists(besides(store, "-wal")));
    }

    void aMissingFolderAndAnOverlongNameAreOneClearLine() {
        const mkb::Status missing = mkb::writeOutputFile(at("no/such/folder/r.md"), "x");
        QVERIFY(!missing);
        QVERIFY2(missing.error().message.find("does not exist") != std::string::npos, missing.error().message.c_str());
        const mkb::Status tooLong = mkb::writeOutputFile(at(std::string(300, 'n')), "x");
        QVERIFY(!tooLong);
        QVERIFY2(tooLong.error().message.find("too long") != std::string::npos, tooLong.error().message.c_str());
    }

    void reportAndExportRefuseTheStoreAsOutputAndLeaveItUnchanged() {
        const fs::path store = storeWithRows();
        const std::string before = fileBytes(store);
        fs::create_symlink(store, at("alias.sqlite"));
        const QList<QStringList> commands = {
            {"report", "--store", q(store), "--output", q(store)},
            {"report", "--store", q(store), "--output", q(at("alias.sqlite"))},
            {"report", "--store", q(store), "--format", "json", "--output", q(besides(store, "-wal"))},
            {"export", "repair-pairs", "--store", q(store), "--output", q(store)},
            {"export", "results-json", "--store", q(store), "--model", "model-0", "--output", q(at("alias.sqlite"))},
        };
        for (const QStringList& command : commands) {
            const CliRun run = runMkb(command);
            QVERIFY2(run.exitCode == 3, qPrintable(command.join(' ') + " -> " + run.err));
            QVERIFY2(isOneLine(run.err) && run.err.contains("project store"), qPrintable(run.err));
            QCOMPARE(fileBytes(store), before);
        }
        QVERIFY(fs::is_symlink(at("alias.sqlite")));
    }

    void reportOutputOnADirectoryOrAFifoFailsAtOnceWithOneLine() {
        const fs::path store = storeWithRows();
        fs::create_directories(at("out"));
        QVERIFY(::mkfifo(at("pipe").c_str(), 0600) == 0);
        const CliRun directory = runMkb({"report", "--store", q(store), "--output", q(at("out"))});
        QCOMPARE(directory.exitCode, 3);
        QVERIFY2(isOneLine(directory.err) && directory.err.contains("is a directory; name a file") &&
                     !directory.err.contains("Success"),
                 qPrintable(directory.err));
        const CliRun fifo = runMkb({"report", "--store", q(store), "--output", q(at("pipe"))}, {}, 20000);
        QCOMPARE(fifo.exitCode, 3); // -1 would mean it blocked on the FIFO
        QVERIFY2(isOneLine(fifo.err) && fifo.err.contains("FIFO"), qPrintable(fifo.err));
        const CliRun written = runMkb({"report", "--store", q(store), "--output", q(at("report.md"))});
        QCOMPARE(written.exitCode, 0);
        QVERIFY(fileBytes(at("report.md")).find("MetaKernelBench") != std::string::npos);
    }

    void suiteCheckRefusesADirectoryOrTheStoreAsJsonOrTableBeforeGrading() {
        const fs::path store = storeWithRows();
        const std::string before = fileBytes(store);
        const QString source = QString::fromStdString(mkbtest::sourceDir().string());
        const QStringList base = {"suite",    "check",  "--suite",   source + "/tests/suite/fixtures/suite",
                                  "--dsls",   "cpusim", "--dsl-dir", source + "/tests/fixtures/dsls",
                                  "--device", "cpu",    "--store",   q(store)};
        fs::create_directories(at("out"));
        const CliRun json = runMkb(base + QStringList{"--json", q(at("out"))});
        QCOMPARE(json.exitCode, 3);
        QVERIFY2(json.err.contains("--json " + q(at("out")) + " is a directory"), qPrintable(json.err));
        const CliRun table = runMkb(base + QStringList{"--table", q(store)});
        QCOMPARE(table.exitCode, 3);
        QVERIFY2(table.err.contains("--table") && table.err.contains("project store"), qPrintable(table.err));
        QVERIFY(!json.out.contains("checking")); // refused before the grader started
        QCOMPARE(fileBytes(store), before);
    }

    void aFullStandardOutputExitsNonZeroWithOneLine() {
        const fs::path store = storeWithRows();
        for (const QStringList& command :
             {QStringList{"report", "--store", q(store)}, QStringList{"db", "info", "--store", q(store)},
              QStringList{"--version"}, QStringList{"--help"}, QStringList{"report", "--help"}}) {
            const CliRun run = runMkb(command, "/dev/full");
            QVERIFY2(run.exitCode == 3, qPrintable(command.join(' ') + " exited " + QString::number(run.exitCode)));
            QVERIFY2(isOneLine(run.err) && run.err.contains("cannot write to standard output"), qPrintable(run.err));
        }
        QCOMPARE(runMkb({"report", "--store", q(store)}, "/dev/null").exitCode, 0);
    }
};

QTEST_GUILESS_MAIN(OutputFileTest)
#include "tst_output_file.moc"
