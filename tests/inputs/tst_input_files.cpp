// Tests of readFile, walkFolder and safeOneLine against hostile inputs: FIFOs, devices, loops, cycles, control bytes.
#include "core/util/dir_walk.h"
#include "core/util/text.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <thread>

namespace fs = std::filesystem;

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

void writeText(const fs::path& path, const std::string& bytes) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
}

/// readFile on a thread, so a read that blocks fails the test instead of hanging it; afterwards a writer is opened
/// and closed on a FIFO path, which releases a reader stuck in open() or read().
mkb::Result<std::string> readWithin(const fs::path& path, std::chrono::seconds limit, bool* finished) {
    auto result = std::make_shared<std::promise<mkb::Result<std::string>>>();
    std::future<mkb::Result<std::string>> future = result->get_future();
    std::thread([path, result] { result->set_value(mkb::readFile(path)); }).detach();
    *finished = future.wait_for(limit) == std::future_status::ready;
    if (!*finished) {
        int writer = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
        if (writer >= 0) {
            ::close(writer);
        }
        return mkb::makeError("timed out");
    }
    return future.get();
}

/// Every entry a walk visits, in order, as paths relative to the root; folders are always entered.
std::vector<std::string> walked(const fs::path& root, std::vector<mkb::WalkProblem>* problems = nullptr,
                                mkb::WalkOptions options = {}) {
    std::vector<std::string> seen;
    auto found = mkb::walkFolder(
        root,
        [&](const mkb::WalkEntry& entry) {
            seen.push_back(entry.path.lexically_relative(root).generic_string());
            return seen.size() < 10000; // a walk that explodes stops here, and the counts below fail
        },
        options);
    if (problems) {
        *problems = found;
    }
    return seen;
}

} // namespace

using mkb::Result;

class InputFilesTest : public QObject {
    Q_OBJECT
private slots:
    void readFileRefusesAFifoWithoutBlocking() {
        QTemporaryDir dir;
        const fs::path fifo = fs::path(dir.path().toStdString()) / "01_problem.py";
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        bool finished = false;
        auto read = readWithin(fifo, std::chrono::seconds(10), &finished);
        QVERIFY2(finished, "readFile blocked on a FIFO");
        QVERIFY(!read);
        QVERIFY(contains(read.error().message, fifo.string()));
        QVERIFY(contains(read.error().message, "FIFO"));
        QVERIFY(contains(read.error().message, "not a regular file"));
    }

    void readFileRefusesALinkToDevZeroWithoutGrowing() {
        QTemporaryDir dir;
        const fs::path link = fs::path(dir.path().toStdString()) / "record.json";
        fs::create_symlink("/dev/zero", link);
        bool finished = false;
        auto read = readWithin(link, std::chrono::seconds(10), &finished);
        QVERIFY2(finished, "readFile kept reading /dev/zero");
        QVERIFY(!read);
        QVERIFY(contains(read.error().message, link.string()));
        QVERIFY(contains(read.error().message, "character device"));
    }

    void readFileRefusesAFolder() {
        QTemporaryDir dir;
        auto read = mkb::readFile(dir.path().toStdString());
        QVERIFY(!read);
        QVERIFY(contains(read.error().message, "it is a folder, not a regular file"));
    }

    void readFileRefusesAFileOverTheLimitAndNamesTheLimit() {
        QTemporaryDir dir;
        const fs::path file = fs::path(dir.path().toStdString()) / "kernel.py";
        writeText(file, std::string(101, 'x'));
        auto over = mkb::readFile(file, 100);
        QVERIFY(!over);
        QVERIFY(contains(over.error().message, file.string()));
        QVERIFY(contains(over.error().message, "101 bytes"));
        QVERIFY(contains(over.error().message, "limit of 100 bytes"));
        auto exact = mkb::readFile(file, 101);
        QVERIFY(exact);
        QCOMPARE(exact->size(), std::size_t(101));
    }

    void readFileReadsAProcFileThatReportsSizeZero() {
        auto read = mkb::readFile("/proc/self/stat");
        QVERIFY(read);
        QVERIFY(!read->empty());
    }

    void readFileReadsARegularFileThroughALink() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        writeText(root / "real.json", "{\"a\": 1}");
        fs::create_symlink("real.json", root / "link.json");
        auto read = mkb::readFile(root / "link.json");
        QVERIFY(read);
        QCOMPARE(*read, std::string("{\"a\": 1}"));
    }

    void readFileOfASelfLinkSaysItLoops() {
        QTemporaryDir dir;
        const fs::path link = fs::path(dir.path().toStdString()) / "loop.py";
        fs::create_symlink("loop.py", link);
        auto read = mkb::readFile(link);
        QVERIFY(!read);
        QVERIFY(contains(read.error().message, link.string()));
        QVERIFY(contains(read.error().message, "symbolic link that never resolves"));
    }

    void readFileErrorsAreOneLineWhateverThePathHolds() {
        QTemporaryDir dir;
        const fs::path missing = fs::path(dir.path().toStdString()) / "bad\nname\x1b.json";
        auto read = mkb::readFile(missing);
        QVERIFY(!read);
        QVERIFY(!contains(read.error().message, "\n"));
        QVERIFY(contains(read.error().message, "bad\\nname\\x1b.json"));
    }

    void safeOneLineEscapesControlCharactersVisibly_data() {
        QTest::addColumn<QByteArray>("raw");
        QTest::addColumn<QByteArray>("shown");
        QTest::newRow("newline") << QByteArray("a\nb") << QByteArray("a\\nb");
        QTest::newRow("carriage return and tab") << QByteArray("a\r\tb") << QByteArray("a\\r\\tb");
        QTest::newRow("escape") << QByteArray("\x1b[31mred") << QByteArray("\\x1b[31mred");
        QTest::newRow("nul") << QByteArray("a\0b", 3) << QByteArray("a\\x00b");
        QTest::newRow("delete") << QByteArray("a\x7f") << QByteArray("a\\x7f");
        QTest::newRow("not UTF-8") << QByteArray("a\xff\xc3") << QByteArray("a\\xff\\xc3");
        QTest::newRow("C1 next line") << QByteArray("a\xc2\x85z") << QByteArray("a\\xc2\\x85z");
        QTest::newRow("line separator") << QByteArray("a\xe2\x80\xa8z") << QByteArray("a\\xe2\\x80\\xa8z");
        QTest::newRow("plain UTF-8 is kept")
            << QByteArray("caf\xc3\xa9 \xe2\x86\x92 ok") << QByteArray("caf\xc3\xa9 \xe2\x86\x92 ok");
        QTest::newRow("ascii is kept") << QByteArray("family/07_slug.py") << QByteArray("family/07_slug.py");
    }

    void safeOneLineEscapesControlCharactersVisibly() {
        QFETCH(QByteArray, raw);
        QFETCH(QByteArray, shown);
        const std::string out = mkb::safeOneLine(std::string_view(raw.constData(), raw.size()));
        QCOMPARE(QByteArray::fromStdString(out), shown);
        QCOMPARE(mkb::safeOneLine(out), out); // escaping twice changes nothing
    }

    void walkVisitsEntriesSortedAndDepthFirst() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        writeText(root / "b/2.txt", "");
        writeText(root / "b/1.txt", "");
        writeText(root / "a.txt", "");
        writeText(root / "c/d/e.txt", "");
        std::vector<mkb::WalkProblem> problems;
        QCOMPARE(walked(root, &problems),
                 (std::vector<std::string>{"a.txt", "b", "b/1.txt", "b/2.txt", "c", "c/d", "c/d/e.txt"}));
        QVERIFY(problems.empty());
    }

    void twoLinksToDotCostOneEntryEachAndNameTheCycle() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        writeText(root / "family/01_a.py", "");
        for (const fs::path& folder : {root, root / "family"}) {
            fs::create_directory_symlink(".", folder / "x");
            fs::create_directory_symlink(".", folder / "y");
        }
        std::vector<mkb::WalkProblem> problems;
        const std::vector<std::string> seen = walked(root, &problems);
        QCOMPARE(seen, (std::vector<std::string>{"family", "family/01_a.py", "family/x", "family/y", "x", "y"}));
        QCOMPARE(problems.size(), std::size_t(4));
        for (const mkb::WalkProblem& problem : problems) {
            QVERIFY2(contains(problem.message, "(a cycle); not followed"), problem.message.c_str());
        }
    }

    void aFolderLinkedTwiceIsWalkedOnce() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        writeText(root / "moe/01_a.py", "");
        fs::create_directory_symlink("moe", root / "zz_moe");
        std::vector<mkb::WalkProblem> problems;
        const std::vector<std::string> seen = walked(root, &problems);
        QCOMPARE(seen, (std::vector<std::string>{"moe", "moe/01_a.py", "zz_moe"}));
        QCOMPARE(problems.size(), std::size_t(1));
        QCOMPARE(problems[0].path, root / "zz_moe");
        QVERIFY(contains(problems[0].message, "the same folder as " + (root / "moe").string() + ", already walked"));
    }

    void walkBoundsTheDepth() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        writeText(root / "1/2/3/4/5/deep.txt", "");
        mkb::WalkOptions options;
        options.maxDepth = 3;
        std::vector<mkb::WalkProblem> problems;
        const std::vector<std::string> seen = walked(root, &problems, options);
        QCOMPARE(seen, (std::vector<std::string>{"1", "1/2", "1/2/3"}));
        QCOMPARE(problems.size(), std::size_t(1));
        QCOMPARE(problems[0].path, root / "1/2/3");
        QVERIFY(contains(problems[0].message, "nested more than 3 folders deep"));
    }

    void walkWithoutFollowingLinksStaysInsideTheTree() {
        QTemporaryDir dir, outside;
        const fs::path root = dir.path().toStdString();
        writeText(fs::path(outside.path().toStdString()) / "secret.py", "");
        fs::create_directory_symlink(outside.path().toStdString(), root / "out");
        mkb::WalkOptions options;
        options.followLinks = false;
        QCOMPARE(walked(root, nullptr, options), (std::vector<std::string>{"out"}));
        QCOMPARE(walked(root), (std::vector<std::string>{"out", "out/secret.py"}));
    }

    void brokenAndLoopingLinksAreUnreachableEntriesWithAReason() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        fs::create_symlink("nowhere", root / "broken");
        fs::create_symlink("loop", root / "loop");
        std::vector<mkb::WalkEntry> entries;
        auto problems = mkb::walkFolder(root, [&](const mkb::WalkEntry& entry) {
            entries.push_back(entry);
            return true;
        });
        QVERIFY(problems.empty());
        QCOMPARE(entries.size(), std::size_t(2));
        for (const mkb::WalkEntry& entry : entries) {
            QVERIFY(entry.kind == mkb::WalkEntryKind::Unreachable);
            QVERIFY(entry.isSymlink);
        }
        QVERIFY(contains(entries[0].problem, "does not exist"));
        QVERIFY(contains(entries[1].problem, "never resolves"));
    }

    void whyNotAFolderSaysWhatThePathIs() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        writeText(root / "file.txt", "");
        fs::create_symlink("loop", root / "loop");
        fs::create_symlink("nowhere", root / "broken");
        QCOMPARE(mkb::whyNotAFolder(root), std::string());
        QVERIFY(contains(mkb::whyNotAFolder(root / "file.txt"), "is a regular file, not a folder"));
        QVERIFY(contains(mkb::whyNotAFolder(root / "loop"), "never resolves"));
        QVERIFY(contains(mkb::whyNotAFolder(root / "broken"), "symbolic link to something that does not exist"));
        QVERIFY(contains(mkb::whyNotAFolder(root / "missing"), "does not exist"));
        QVERIFY(contains(mkb::whyNotAFolder("/dev/null"), "character device"));
    }
};

QTEST_GUILESS_MAIN(InputFilesTest)
#include "tst_input_files.moc"
