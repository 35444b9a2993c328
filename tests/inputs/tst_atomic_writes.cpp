// Tests of writeFileAtomically at awkward destinations: a symbolic link, a folder, a FIFO, a missing folder.
#include "core/util/text.h"

#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace {

std::string contentsOf(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace

class AtomicWritesTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    fs::path root() const { return dir_.path().toStdString(); }

private slots:
    void aNewFileIsWrittenWhole() {
        const fs::path file = root() / "new.txt";
        QVERIFY(mkb::writeFileAtomically(file, "hello\n").ok());
        QCOMPARE(contentsOf(file), std::string("hello\n"));
        QVERIFY(mkb::writeFileAtomically(file, "again\n").ok());
        QCOMPARE(contentsOf(file), std::string("again\n"));
    }

    void aSymbolicLinkIsWrittenThroughAndStaysALink() {
        const fs::path target = root() / "target.txt";
        const fs::path link = root() / "link.txt";
        std::ofstream(target) << "old";
        fs::create_symlink(target, link);
        QVERIFY(mkb::writeFileAtomically(link, "new").ok());
        QVERIFY(fs::is_symlink(link));
        QCOMPARE(contentsOf(target), std::string("new"));
    }

    void aFolderDestinationIsRefusedWithAReasonNotSuccess() {
        const fs::path folder = root() / "a-folder";
        fs::create_directories(folder);
        mkb::Status written = mkb::writeFileAtomically(folder, "x");
        QVERIFY(!written.ok());
        const std::string message = written.error().message;
        QVERIFY2(message.find("Success") == std::string::npos, message.c_str());
        QVERIFY2(message.find(folder.string()) != std::string::npos, message.c_str());
        QVERIFY2(message.find("directory") != std::string::npos, message.c_str());
        QVERIFY(fs::is_directory(folder));
    }

    void aFifoDestinationIsRefusedAndLeftInPlace() {
        const fs::path fifo = root() / "pipe";
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        mkb::Status written = mkb::writeFileAtomically(fifo, "x");
        QVERIFY(!written.ok());
        QVERIFY2(written.error().message.find("FIFO") != std::string::npos, written.error().message.c_str());
        QVERIFY(fs::is_fifo(fifo));
    }

    void aMissingFolderSaysToCreateIt() {
        mkb::Status written = mkb::writeFileAtomically(root() / "missing" / "file.txt", "x");
        QVERIFY(!written.ok());
        QVERIFY2(written.error().message.find("does not exist") != std::string::npos, written.error().message.c_str());
    }
};

QTEST_GUILESS_MAIN(AtomicWritesTest)
#include "tst_atomic_writes.moc"
