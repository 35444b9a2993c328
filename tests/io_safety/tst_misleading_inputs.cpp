// io safety, round 3: the thirteen hostile inputs that used to lose data, mislead or exit with the wrong code, each
// reproduced exactly through the mkb binary, asserting the message, the exit code and that no file was lost.
#include "io_safety_fixtures.h"

#include "support/results_folder.h"

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QTest>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

using namespace iosafety;
using mkbtest::writeText;

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitBadInput = 3;
constexpr int kExitStore = 4;

/// A record.json that passed at 1.5x, with the usage object given as JSON text.
std::string recordWithUsage(const std::string& usage, const std::string& speedup = "1.5") {
    return R"({"rewards": {"imported": 1.0, "correct": 1.0, "passed": 1.0, "speedup_vs_eager": )" + speedup +
           R"(}, "timed_out": false, "error": null, "skipped": null, "usage": )" + usage + "}";
}

/// A results folder with one model `name` under results/<folder>/, problem 01_mha_prefill (family attention).
fs::path modelFolder(const fs::path& results, const std::string& folder, const std::string& name) {
    const fs::path model = results / folder;
    writeText(model / "store.json", R"({"model": ")" + name + R"(", "prefix": "abc"})");
    writeText(model / "results.json",
              R"({"cells": [{"cell": {"problem": "01_mha_prefill", "category": "attention"}}]})");
    return model / "problems" / "01_mha_prefill";
}

} // namespace

class MisleadingInputsTest : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<QTemporaryDir> dir_;
    fs::path at(const std::string& name) const { return fs::path(dir_->path().toStdString()) / name; }
    static QString q(const fs::path& path) { return QString::fromStdString(path.string()); }

    fs::path initStore(const std::string& name) {
        const fs::path store = at(name);
        const CliRun init = runMkb({"db", "init", "--store", q(store)});
        return init.exitCode == 0 ? store : fs::path();
    }

    /// A suite root with one family folder holding a valid problem file copied from the shipped suite.
    fs::path suiteWithProblem(const std::string& source) {
        const fs::path root = at("suite");
        writeText(root / "fam" / "01_good.py", source);
        return root;
    }

    static std::string shippedProblem() {
        return fileBytes(fs::path(mkbtest::sourceDir()) / "problems" / "mlp_norm" / "03_fused_add_rmsnorm.py");
    }

private slots:
    void init() {
        dir_ = std::make_unique<QTemporaryDir>();
        QVERIFY(dir_->isValid());
    }

    // 1. Model names that clean up to one folder name are refused before anything is written.
    void modelsSharingAFolderNameAreRefusedAndNothingIsWritten() {
        const fs::path results = at("results");
        for (const auto& [folder, name] : {std::pair{"a", "org/m"}, std::pair{"b", "org_m"}}) {
            writeText(modelFolder(results, folder, name) / "abc_p01_r1_solo_triton" / "record.json",
                      mkbtest::recordJson(1.0, 1.5));
        }
        const fs::path store = at("s.sqlite");
        QCOMPARE(runMkb({"import", q(results), "--store", q(store)}).exitCode, 0);
        const fs::path out = at("out");
        const CliRun exported = runMkb({"export", "results-json", "--store", q(store), "--output", q(out)});
        QCOMPARE(exported.exitCode, kExitBadInput);
        QVERIFY2(exported.err.contains("'org/m' and 'org_m' would both be written to") &&
                     exported.err.contains("nothing was written"),
                 qPrintable(exported.err));
        QVERIFY(isOneLine(exported.err));
        QVERIFY(!fs::exists(out / "org_m" / "results.json"));
    }

    // 2. Token sums past 2^63 - 1 and cost sums past the largest double say "overflow", never a wrapped number.
    void usageSumsThatOverflowAreShownAsOverflowNotWrappedOrUnknown() {
        const fs::path problem = modelFolder(at("results"), "glm", "z/glm");
        const std::string huge =
            R"({"n_input_tokens": 5000000000000000000, "n_cache_tokens": 0, "n_output_tokens": 1, "cost_usd": 1e308,
                "agent_sec": 1e308})";
        for (const char* trial :
             {"abc_p01_r1_solo_triton", "abc_p01_r2_solo_triton", "abc_p01_r1_solo_cuda", "abc_p01_r2_solo_cuda",
              "abc_p01_r1_triton2cuda_skill", "abc_p01_r2_triton2cuda_skill"}) {
            writeText(problem / trial / "record.json", recordWithUsage(huge));
        }
        const fs::path store = at("s.sqlite");
        QCOMPARE(runMkb({"import", q(at("results")), "--store", q(store)}).exitCode, 0);
        const CliRun report = runMkb({"report", "--store", q(store), "--metrics", "usage", "--format", "csv"});
        QCOMPARE(report.exitCode, 0);
        QVERIFY2(!report.out.contains("-8446744073709"), qPrintable(report.out));
        QVERIFY2(report.out.contains("all,solo_triton,2,2,overflow,0,2,overflow,"), qPrintable(report.out));
        QVERIFY2(report.out.contains("a usage record carries an absurd value"), qPrintable(report.out));

        const fs::path json = at("results.json");
        QCOMPARE(runMkb({"export", "results-json", "--store", q(store), "--output", q(json)}).exitCode, 0);
        auto document = nlohmann::json::parse(fileBytes(json));
        const auto& usage = document["overall"]["usage"]["solo_triton"];
        QVERIFY2(usage["n_input_tokens"].is_null() && usage["cost_usd"].is_null(), usage.dump().c_str());
        QCOMPARE(usage["n_output_tokens"].get<long long>(), 2LL);
        QVERIFY2(usage["overflow"] == nlohmann::json({"n_input_tokens", "cost_usd"}), usage.dump().c_str());
        QVERIFY(usage["agent_sec"].get<double>() > 9e307); // the mean of 1e308 and 1e308, not infinity
    }

    // 3. --output never replaces a different project store or its write-ahead log.
    void reportOutputRefusesAnotherStoreAndItsLogAndLeavesThemWhole() {
        const fs::path store = initStore("s.sqlite");
        const fs::path other = initStore("other.sqlite");
        QVERIFY(!store.empty() && !other.empty());
        const std::string before = fileBytes(other);
        const CliRun report = runMkb({"report", "--store", q(store), "--output", q(other)});
        QCOMPARE(report.exitCode, kExitBadInput);
        QVERIFY2(report.err.contains("is an SQLite database") && report.err.contains("left untouched"),
                 qPrintable(report.err));
        QCOMPARE(fileBytes(other), before);
        writeBytes(besides(other, "-wal"), std::string("\x37\x7f\x06\x82", 4) + std::string(28, '\0'));
        const CliRun wal = runMkb({"report", "--store", q(store), "--output", q(besides(other, "-wal"))});
        QCOMPARE(wal.exitCode, kExitBadInput);
        QCOMPARE(fileBytes(besides(other, "-wal")).size(), std::size_t(32));
        QCOMPARE(fileBytes(other), before);
    }

    // 4. A healthy store on a read-only mount (no -shm yet) is read by reports, not called corrupt.
    void aHealthyStoreInAReadOnlyFolderIsReadNotCalledCorrupt() {
        const fs::path folder = at("ro");
        fs::create_directories(folder);
        QVERIFY(writeStore(folder / "s.sqlite", 1, 3));
        bool mounted = false;
        if (::geteuid() == 0) {
            // root writes through permissions: only a read-only bind mount makes the folder read-only for it.
            mounted = ::mount(folder.c_str(), folder.c_str(), nullptr, MS_BIND, nullptr) == 0;
            if (mounted && ::mount(nullptr, folder.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0) {
                ::umount(folder.c_str());
                mounted = false;
            }
            if (!mounted) {
                QSKIP("running as root without the right to bind-mount: no folder can be read-only here");
            }
        } else {
            ::chmod(folder.c_str(), 0555);
        }
        const CliRun report = runMkb({"report", "--store", q(folder / "s.sqlite")});
        const CliRun info = runMkb({"db", "info", "--store", q(folder / "s.sqlite")});
        const CliRun write = runMkb({"db", "init", "--store", q(folder / "s.sqlite")});
        if (mounted) {
            ::umount(folder.c_str());
        } else {
            ::chmod(folder.c_str(), 0755);
        }
        QVERIFY2(report.exitCode == 0, qPrintable(report.err));
        QVERIFY2(!report.err.contains("corrupt"), qPrintable(report.err));
        QVERIFY2(info.exitCode == 0 && info.out.contains("schema version"), qPrintable(info.out + info.err));
        QCOMPARE(write.exitCode, kExitStore);
        QVERIFY2(write.err.contains("is read-only") && !write.err.contains("corrupt"), qPrintable(write.err));
        QCOMPARE(rowCount(folder / "s.sqlite", "problems"), 3LL);
    }

    // 5. Bytes appended to a store are named as such, not "truncated".
    void bytesAppendedToAStoreAreNamedAsAppendedNotTruncated() {
        const fs::path store = initStore("s.sqlite");
        const std::string bytes = fileBytes(store) + "appended";
        writeBytes(store, bytes);
        const CliRun info = runMkb({"db", "info", "--store", q(store)});
        QCOMPARE(info.exitCode, kExitStore);
        QVERIFY2(info.err.contains("8 bytes after its") && info.err.contains("something was appended"),
                 qPrintable(info.err));
        QVERIFY(!info.err.contains("truncated"));
        QCOMPARE(fileBytes(store), bytes);
    }

    // 6. An empty --store is called empty.
    void anEmptyStorePathIsCalledEmpty() {
        const CliRun info = runMkb({"db", "info", "--store", ""});
        QCOMPARE(info.exitCode, kExitStore);
        QVERIFY2(info.err.contains("the store path is empty"), qPrintable(info.err));
        QVERIFY2(!info.err.contains("WAL") && !info.err.contains("network"), qPrintable(info.err));
    }

    // 7. A store that is a link to /dev/null is called a device, not "Operation not supported".
    void aStoreLinkedToDevNullIsCalledADevice() {
        const fs::path link = at("s.sqlite");
        fs::create_symlink("/dev/null", link);
        for (const QStringList& verb : {QStringList{"db", "info"}, QStringList{"report"}}) {
            const CliRun run = runMkb(verb + QStringList{"--store", q(link)});
            QCOMPARE(run.exitCode, kExitStore);
            QVERIFY2(run.err.contains("is a character device, not a regular file"), qPrintable(run.err));
            QVERIFY(!run.err.contains("Operation not supported"));
        }
    }

    // 8. A version stamped lower by hand is recognised from the tables; migrate is not advised, and nothing changes.
    void aVersionStampedLowerByHandIsRecognisedAndTheStoreIsLeftAlone() {
        const fs::path store = initStore("s.sqlite");
        const QString latest = QString::number(mkb::Store::latestSchemaVersion());
        for (int stamped : {-3, 0, 3, 6}) {
            sqlite3* db = nullptr;
            QVERIFY(sqlite3_open(store.c_str(), &db) == SQLITE_OK);
            QVERIFY(exec(db, "PRAGMA user_version = " + std::to_string(stamped)));
            sqlite3_close(db);
            const std::string before = fileBytes(store);
            for (const char* verb : {"info", "migrate"}) {
                const CliRun run = runMkb({"db", verb, "--store", q(store)});
                QCOMPARE(run.exitCode, kExitStore);
                QVERIFY2(run.err.contains("says schema version " + QString::number(stamped)) &&
                             run.err.contains("its tables are those of version " + latest) &&
                             run.err.contains("PRAGMA user_version = " + latest),
                         qPrintable(run.err));
                QVERIFY(!run.err.contains("already exists"));
            }
            QCOMPARE(fileBytes(store), before);
        }
    }

    // 9. A replicate past the range is called out of range, not "not a number"; the other trials import.
    void aReplicatePastTheRangeIsCalledOutOfRange() {
        const fs::path problem = modelFolder(at("results"), "glm", "z/glm");
        writeText(problem / "abc_p01_r2147483648_solo_triton" / "record.json", mkbtest::recordJson(1.0, 1.5));
        writeText(problem / "abc_p01_r1_solo_triton" / "record.json", mkbtest::recordJson(1.0, 1.5));
        const fs::path store = at("s.sqlite");
        const CliRun run = runMkb({"import", q(at("results")), "--store", q(store)});
        QCOMPARE(run.exitCode, kExitFailed);
        QVERIFY2(run.err.contains("the replicate 2147483648 is out of range (1 to 999999999)"), qPrintable(run.err));
        QVERIFY(!run.err.contains("must be a number"));
        QCOMPARE(rowCount(store, "trials"), 1LL);
    }

    // 10. Python's NaN and Infinity tokens read: a reward holding one is refused by its field's name, while one in
    //     verdict.json's details does not cost the trial.
    void nanAndInfinityAsPythonWritesThemNameTheFieldThatHoldsThem() {
        const fs::path problem = modelFolder(at("results"), "glm", "z/glm");
        writeText(problem / "abc_p01_r1_solo_triton" / "record.json", recordWithUsage("null", "NaN"));
        writeText(problem / "abc_p01_r2_solo_triton" / "record.json", recordWithUsage(R"({"cost_usd": Infinity})"));
        writeText(problem / "abc_p01_r3_solo_triton" / "record.json", recordWithUsage("null"));
        writeText(problem / "abc_p01_r3_solo_triton" / "verdict.json",
                  R"({"rewards": {}, "eval_sec": 2.0, "details": {"max_abs_error": NaN, "ratio": -Infinity}})");
        const fs::path store = at("s.sqlite");
        const CliRun run = runMkb({"import", q(at("results")), "--store", q(store)});
        QCOMPARE(run.exitCode, kExitFailed);
        QVERIFY2(run.err.contains("r1_solo_triton: record.json: field 'rewards.speedup_vs_eager' is NaN, expected a "
                                  "finite number >= 0; trial skipped"),
                 qPrintable(run.err));
        QVERIFY2(run.err.contains("r2_solo_triton: record.json: field 'usage.cost_usd' is Infinity"),
                 qPrintable(run.err));
        QVERIFY2(!run.err.contains("column") && !run.err.contains("not written by MetaKernelBench"),
                 qPrintable(run.err));
        QCOMPARE(rowCount(store, "trials"), 1LL); // r3: its verdict's NaN is in a detail no metric reads
        const CliRun report = runMkb({"report", "--store", q(store), "--metrics", "usage"});
        QCOMPARE(report.exitCode, 0);
    }

    // 11. CR-only line endings are read as Python reads them.
    void aProblemFileWithCarriageReturnLineEndingsIsReadAsPythonReadsIt() {
        std::string source = shippedProblem();
        QVERIFY(!source.empty());
        std::replace(source.begin(), source.end(), '\n', '\r');
        const fs::path root = suiteWithProblem(source);
        const CliRun run =
            runMkb({"problems", "validate", q(root), "--python", QString::fromStdString(mkbtest::testPython())});
        QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
        QVERIFY2(run.out.contains("1 valid problem(s), 0 issue(s)"), qPrintable(run.out));
    }

    // 12. Importing into a store another process holds the write lock on exits with the store's code.
    void importIntoAWriteLockedStoreExitsWithTheStoreCode() {
        const fs::path store = initStore("s.sqlite");
        const fs::path problem = modelFolder(at("results"), "glm", "z/glm");
        writeText(problem / "abc_p01_r1_solo_triton" / "record.json", mkbtest::recordJson(1.0, 1.5));
        sqlite3* holder = nullptr;
        QVERIFY(sqlite3_open(store.c_str(), &holder) == SQLITE_OK);
        QVERIFY(exec(holder, "BEGIN IMMEDIATE"));
        const CliRun run = runMkb({"import", q(at("results")), "--store", q(store)});
        exec(holder, "ROLLBACK");
        sqlite3_close(holder);
        QCOMPARE(run.exitCode, kExitStore);
        QVERIFY2(run.err.contains("database is locked") && run.err.contains("the import stopped there") &&
                     run.err.contains("run it again once the store can be written"),
                 qPrintable(run.err));
        QCOMPARE(rowCount(store, "trials"), 0LL);
        const CliRun again = runMkb({"import", q(at("results")), "--store", q(store)});
        QCOMPARE(again.exitCode, 0);
        QCOMPARE(rowCount(store, "trials"), 1LL);
    }

    // 13. validate refuses whatever Python's compiler refuses.
    void validateRefusesWhatPythonCannotCompile() {
        const std::string good = shippedProblem();
        const fs::path root = suiteWithProblem(good);
        const std::vector<std::pair<std::string, std::string>> broken = {
            {"02_double_equals.py", good + "x = = 1\n"},
            {"03_def_without_colon.py", good + "def f()\n    return 1\n"},
            {"04_bad_indent.py", good + "def f():\nreturn 1\n"},
            {"05_nul_byte.py", good + "y = 1" + std::string(1, '\0') + "\n"},
            {"06_deep_nesting.py", good + "z = " + std::string(200000, '(') + std::string(200000, ')') + "\n"},
        };
        for (const auto& [name, text] : broken) {
            writeText(root / "fam" / name, text);
        }
        const CliRun run =
            runMkb({"problems", "validate", q(root), "--python", QString::fromStdString(mkbtest::testPython())});
        QCOMPARE(run.exitCode, kExitFailed);
        QVERIFY2(run.out.contains("1 valid problem(s), 5 issue(s)"), qPrintable(run.out));
        for (const auto& [name, text] : broken) {
            QVERIFY2(run.out.contains(QString::fromStdString(name) + ": Python cannot compile it: "),
                     qPrintable(QString::fromStdString(name) + "\n" + run.out));
        }
        QVERIFY(run.out.contains("expected ':'"));
        QVERIFY(run.out.contains("null bytes"));
        QVERIFY(run.out.contains("too many nested parentheses"));
        for (const auto& [name, text] : broken) {
            QCOMPARE(fileBytes(root / "fam" / name), text); // read, never changed
        }
    }

    // Found by the soak: fewer timing draws than the three each grading re-checks were accepted, then every trial
    // failed in the grader. They are refused on the command line, before anything runs.
    void fewerTimingDrawsThanTheRecheckedThreeAreRefusedUpFront() {
        const fs::path store = at("s.sqlite");
        for (const char* draws : {"1", "2"}) {
            const QList<QStringList> commands = {
                {"run", "--model", "m", "--driver", "reference", "--problems", "*", "--dsls", "triton,cuda", "--device",
                 "cpu", "--store", q(store), "--timing-draws", draws},
                {"calibrate", "--device", "cpu", "--store", q(store), "--timing-draws", draws}};
            for (const QStringList& command : commands) {
                const CliRun run = runMkb(command);
                QCOMPARE(run.exitCode, 2);
                QVERIFY2(run.err.contains(QString("--timing-draws takes a whole number from 3 to 100000, not '") +
                                          draws + "'"),
                         qPrintable(run.err));
            }
        }
        QVERIFY(!fs::exists(store)); // refused before the store was opened
    }
};

QTEST_GUILESS_MAIN(MisleadingInputsTest)
#include "tst_misleading_inputs.moc"
