// The Debian package: cpack builds it, it unpacks into a scratch root, and both binaries run from there on its data.
#include "support/testpaths.h"

#include "mkb/commit.h"

#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

namespace {

constexpr int kCpackTimeoutMs = 480000;  // strip, dpkg-shlibdeps, gzip: ~25 s of CPU, minutes on a busy machine
constexpr int kCommandTimeoutMs = 60000; // each installed binary, the screenshot start included

struct Ran {
    int exitCode = -1;
    QString output; // stdout and stderr together
};

/// The rows of `mkb problems list` ("NN  family ..."): not the header, not the "N problem(s)" footer.
int problemRows(const QString& listing) {
    int rows = 0;
    for (const QString& line : listing.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        rows += QRegularExpression(QStringLiteral("^\\d+  ")).match(line).hasMatch() ? 1 : 0;
    }
    return rows;
}

} // namespace

class PackagingTest : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void controlNamesVersionAndDependencies();
    void installsBinariesDataAndDesktopFiles();
    void mkbReportsVersionAndCommit();
    void mkbListsThePackagedSuite();
    void mkbGradeHelp();
    void mkbGradesWithThePackagedGrader();
    void workbenchReportsVersionAndTakesScreenshot();
    void desktopFileAndMetainfoValidate();
    void manPagesMentionEveryVerb();

private:
    Ran run(const QString& program, const QStringList& args, int timeoutMs = kCommandTimeoutMs) const;
    QString installed(const QString& relative) const { return root_.filePath(QStringLiteral("usr/") + relative); }
    QStringList verbsOfMkb() const;

    QTemporaryDir scratch_;
    QDir root_;
    QString deb_;
    QProcessEnvironment environment_;
};

Ran PackagingTest::run(const QString& program, const QStringList& args, int timeoutMs) const {
    QElapsedTimer clock;
    clock.start();
    QProcess process;
    process.setProcessEnvironment(environment_);
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(program, args);
    Ran ran;
    if (!process.waitForStarted(10000)) {
        ran.output = QStringLiteral("could not start %1: %2").arg(program, process.errorString());
        return ran;
    }
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished(5000);
        ran.output = QStringLiteral("%1 did not finish within %2 s\n").arg(program).arg(timeoutMs / 1000);
        ran.output += QString::fromLocal8Bit(process.readAll());
        return ran;
    }
    ran.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    ran.output = QString::fromLocal8Bit(process.readAll());
    if (clock.elapsed() > 5000) {
        qInfo("%s %s took %.1f s", qPrintable(QFileInfo(program).fileName()), qPrintable(args.join(u' ')),
              clock.elapsed() / 1000.0);
    }
    return ran;
}

QStringList PackagingTest::verbsOfMkb() const {
    const Ran help = run(installed(QStringLiteral("bin/mkb")), {QStringLiteral("--help")});
    QStringList verbs;
    bool inVerbs = false;
    for (const QString& line : help.output.split(QLatin1Char('\n'))) {
        if (line.startsWith(QLatin1String("verbs:"))) {
            inVerbs = true;
        } else if (inVerbs && line.startsWith(QLatin1String("  "))) {
            verbs << line.trimmed().section(QLatin1Char(' '), 0, 0);
        } else if (inVerbs) {
            break;
        }
    }
    return verbs;
}

void PackagingTest::initTestCase() {
    QVERIFY2(scratch_.isValid(), "no temporary folder");
    if (QStandardPaths::findExecutable(QStringLiteral("dpkg-deb")).isEmpty()) {
        QSKIP("dpkg-deb is missing: the package cannot be unpacked here (bash packaging/install-deps.sh)");
    }
    // Binaries started from the package must not be pointed at the source tree or a user's store.
    environment_ = QProcessEnvironment::systemEnvironment();
    environment_.remove(QStringLiteral("MKB_DATA_DIR"));
    environment_.remove(QStringLiteral("MKB_STORE"));
    environment_.insert(QStringLiteral("HOME"), scratch_.filePath(QStringLiteral("home")));
    environment_.insert(QStringLiteral("XDG_DATA_HOME"), scratch_.filePath(QStringLiteral("home/data")));
    environment_.insert(QStringLiteral("XDG_CONFIG_HOME"), scratch_.filePath(QStringLiteral("home/config")));
    environment_.insert(QStringLiteral("XDG_RUNTIME_DIR"), scratch_.path());
    environment_.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));

    const QString packages = scratch_.filePath(QStringLiteral("packages"));
    QProcess cpack;
    cpack.setWorkingDirectory(QString::fromStdString(mkbtest::binaryDir().string()));
    cpack.setProcessChannelMode(QProcess::MergedChannels);
    cpack.start(QStringLiteral(MKB_CPACK_COMMAND),
                {QStringLiteral("-G"), QStringLiteral("DEB"), QStringLiteral("-B"), packages});
    QElapsedTimer cpackClock;
    cpackClock.start();
    QVERIFY2(cpack.waitForFinished(kCpackTimeoutMs), "cpack did not finish in time");
    const QString cpackOutput = QString::fromLocal8Bit(cpack.readAll());
    QVERIFY2(cpack.exitCode() == 0, qPrintable(QStringLiteral("cpack failed:\n") + cpackOutput));

    const QStringList debs = QDir(packages).entryList({QStringLiteral("*.deb")}, QDir::Files);
    QVERIFY2(debs.size() == 1, qPrintable(QStringLiteral("expected one .deb, cpack wrote: ") + debs.join(u' ')));
    deb_ = QDir(packages).filePath(debs.first());
    qInfo("cpack wrote %s, %lld KiB, in %.1f s", qPrintable(debs.first()), QFileInfo(deb_).size() / 1024,
          cpackClock.elapsed() / 1000.0);

    root_ = QDir(scratch_.filePath(QStringLiteral("root")));
    const Ran unpacked = run(QStringLiteral("dpkg-deb"), {QStringLiteral("-x"), deb_, root_.path()});
    QVERIFY2(unpacked.exitCode == 0, qPrintable(unpacked.output));
}

void PackagingTest::controlNamesVersionAndDependencies() {
    const Ran control = run(QStringLiteral("dpkg-deb"), {QStringLiteral("-f"), deb_, QStringLiteral("Package"),
                                                         QStringLiteral("Version"), QStringLiteral("Depends")});
    QCOMPARE(control.exitCode, 0);
    QVERIFY2(control.output.contains(QLatin1String("Package: mkb-workbench")), qPrintable(control.output));
    QVERIFY2(control.output.contains(QStringLiteral("Version: ") + QStringLiteral(MKB_VERSION)),
             qPrintable(control.output));
    const QString depends = control.output.section(QLatin1String("Depends:"), 1);
    // dpkg-shlibdeps names the libraries the binaries link; the grader's interpreter is declared by hand.
    for (const char* library :
         {"libqt6widgets6", "libqt6svg6", "libqcustomplot", "libsqlite3-0", "libcurl4", "python3"}) {
        QVERIFY2(depends.contains(QLatin1String(library)),
                 qPrintable(QStringLiteral("Depends lacks %1: %2").arg(QLatin1String(library), depends)));
    }
}

void PackagingTest::installsBinariesDataAndDesktopFiles() {
    const QStringList expected = {
        QStringLiteral("bin/mkb"),
        QStringLiteral("bin/mkb-workbench"),
        QStringLiteral("share/mkb/grader/mkbgrader/__init__.py"),
        QStringLiteral("share/mkb/resources/dsls/triton.json"),
        QStringLiteral("share/mkb/resources/prompts/system.md"),
        QStringLiteral("share/mkb/problems/attention/01_gqa_decode_attention.py"),
        QStringLiteral("share/mkb/problems/attention/_solutions/01_gqa_decode_attention.triton.py"),
        QStringLiteral("share/applications/mkb-workbench.desktop"),
        QStringLiteral("share/metainfo/io.github.metakernelbench.workbench.metainfo.xml"),
        QStringLiteral("share/icons/hicolor/scalable/apps/mkb-workbench.svg"),
        QStringLiteral("share/icons/hicolor/48x48/apps/mkb-workbench.png"),
        QStringLiteral("share/icons/hicolor/256x256/apps/mkb-workbench.png"),
        QStringLiteral("share/man/man1/mkb.1.gz"),
        QStringLiteral("share/man/man1/mkb-workbench.1.gz"),
    };
    for (const QString& relative : expected) {
        QVERIFY2(QFileInfo::exists(installed(relative)),
                 qPrintable(QStringLiteral("missing from the package: usr/") + relative));
    }
    const QImage icon(installed(QStringLiteral("share/icons/hicolor/256x256/apps/mkb-workbench.png")));
    QCOMPARE(icon.size(), QSize(256, 256));
    // Build leftovers stay out of the package.
    QDirIterator files(root_.path(), QDir::AllEntries | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
    while (files.hasNext()) {
        const QString file = files.next();
        QVERIFY2(!file.contains(QLatin1String("__pycache__")) && !file.endsWith(QLatin1String(".qrc")),
                 qPrintable(QStringLiteral("stray file in the package: ") + file));
    }
}

void PackagingTest::mkbReportsVersionAndCommit() {
    const Ran version = run(installed(QStringLiteral("bin/mkb")), {QStringLiteral("--version")});
    QCOMPARE(version.exitCode, 0);
    QCOMPARE(
        version.output.trimmed(),
        QStringLiteral("mkb %1 (commit %2)").arg(QStringLiteral(MKB_VERSION), QString::fromLatin1(mkb::kGitCommit)));
    const QRegularExpression commit(QStringLiteral("\\(commit ([0-9a-f]{12}|unknown)\\)"));
    QVERIFY2(commit.match(version.output).hasMatch(), qPrintable(version.output));
}

void PackagingTest::mkbListsThePackagedSuite() {
    const QString mkb = installed(QStringLiteral("bin/mkb"));
    QDir suite(installed(QStringLiteral("share/mkb/problems")));
    QStringList problemFiles;
    QDirIterator files(suite.path(), {QStringLiteral("[0-9][0-9]_*.py")}, QDir::Files, QDirIterator::Subdirectories);
    while (files.hasNext()) {
        const QString file = files.next();
        if (!file.contains(QLatin1String("/_solutions/"))) {
            problemFiles << file;
        }
    }
    QVERIFY2(problemFiles.size() >= 6,
             qPrintable(QStringLiteral("only %1 problems packaged").arg(problemFiles.size())));

    const Ran listed = run(mkb, {QStringLiteral("problems"), QStringLiteral("list")});
    QVERIFY2(listed.exitCode == 0, qPrintable(listed.output));
    const int rows = problemRows(listed.output);
    QCOMPARE(rows, int(problemFiles.size()));
    QVERIFY2(listed.output.contains(QLatin1String("cuda,numba,pallas,triton")), "the packaged solutions are not seen");

    // The list comes from the package, not from the source tree it was built from: remove one problem there.
    std::sort(problemFiles.begin(), problemFiles.end());
    const QString removed = problemFiles.first();
    const QString slug = QFileInfo(removed).completeBaseName().section(QLatin1Char('_'), 1);
    QVERIFY(listed.output.contains(slug));
    QVERIFY(QFile::remove(removed));
    const Ran after = run(mkb, {QStringLiteral("problems"), QStringLiteral("list")});
    QVERIFY2(after.exitCode == 0, qPrintable(after.output));
    QVERIFY2(!after.output.contains(slug), qPrintable(QStringLiteral("still listed after removal: ") + slug));
    QCOMPARE(problemRows(after.output), rows - 1);
}

void PackagingTest::mkbGradeHelp() {
    const Ran help = run(installed(QStringLiteral("bin/mkb")), {QStringLiteral("grade"), QStringLiteral("--help")});
    QCOMPARE(help.exitCode, 0);
    QVERIFY2(help.output.startsWith(QLatin1String("usage: mkb grade KERNEL --problem P --dsl D")),
             qPrintable(help.output));
    QVERIFY2(help.output.contains(QLatin1String("--problem")) && help.output.contains(QLatin1String("exit codes")),
             qPrintable(help.output));
}

void PackagingTest::mkbGradesWithThePackagedGrader() {
    // The CPU test DSL and fixture problem come from the source tree; the grader comes from the package.
    const QString fixtures = QString::fromStdString((mkbtest::sourceDir() / "tests" / "fixtures").string());
    QProcessEnvironment saved = environment_;
    environment_.insert(QStringLiteral("MKB_CPUSIM_PATH"), fixtures + QStringLiteral("/cpusim_lib"));
    const Ran graded = run(installed(QStringLiteral("bin/mkb")),
                           {QStringLiteral("grade"), fixtures + QStringLiteral("/solutions/01_vector_add.cpusim.py"),
                            QStringLiteral("--problem"), QStringLiteral("1"), QStringLiteral("--suite"),
                            fixtures + QStringLiteral("/problems"), QStringLiteral("--dsl"), QStringLiteral("cpusim"),
                            QStringLiteral("--dsl-dir"), fixtures + QStringLiteral("/dsls"), QStringLiteral("--device"),
                            QStringLiteral("cpu"), QStringLiteral("--python"),
                            QString::fromStdString(mkbtest::testPython()), QStringLiteral("--json")},
                           kCpackTimeoutMs);
    environment_ = saved;
    QVERIFY2(graded.exitCode == 0, qPrintable(graded.output));
    QVERIFY2(graded.output.contains(QLatin1String("\"passed\":true")), qPrintable(graded.output));
}

void PackagingTest::workbenchReportsVersionAndTakesScreenshot() {
    const QString workbench = installed(QStringLiteral("bin/mkb-workbench"));
    const Ran version = run(workbench, {QStringLiteral("--version")});
    QCOMPARE(version.exitCode, 0);
    QVERIFY2(version.output.contains(QStringLiteral("mkb-workbench ") + QStringLiteral(MKB_VERSION)),
             qPrintable(version.output));
    QVERIFY2(version.output.contains(QStringLiteral("(commit ")), qPrintable(version.output));

    // A first start on the default project: it is created under the scratch home, and the window is painted.
    const QString picture = scratch_.filePath(QStringLiteral("workbench.png"));
    const Ran started =
        run(workbench, {QStringLiteral("--screenshot"), picture, QStringLiteral("--view"), QStringLiteral("problems")});
    QVERIFY2(started.exitCode == 0, qPrintable(started.output));
    const QImage image(picture);
    QCOMPARE(image.size(), QSize(1280, 800));
    QVERIFY(QFileInfo::exists(scratch_.filePath(QStringLiteral("home/data/mkb/default.mkb.sqlite"))));
}

void PackagingTest::desktopFileAndMetainfoValidate() {
    const QString desktop = installed(QStringLiteral("share/applications/mkb-workbench.desktop"));
    QFile desktopFile(desktop);
    QVERIFY(desktopFile.open(QIODevice::ReadOnly));
    const QString entry = QString::fromUtf8(desktopFile.readAll());
    QVERIFY(entry.contains(QLatin1String("\nExec=mkb-workbench")));
    QVERIFY(entry.contains(QLatin1String("\nIcon=mkb-workbench\n")));

    const QString metainfo =
        installed(QStringLiteral("share/metainfo/io.github.metakernelbench.workbench.metainfo.xml"));
    QFile metainfoFile(metainfo);
    QVERIFY(metainfoFile.open(QIODevice::ReadOnly));
    const QString component = QString::fromUtf8(metainfoFile.readAll());
    QVERIFY(component.contains(QLatin1String("<launchable type=\"desktop-id\">mkb-workbench.desktop</launchable>")));
    QVERIFY2(component.contains(QStringLiteral("<release version=\"%1\"").arg(QStringLiteral(MKB_VERSION))),
             "the metainfo has no <release> entry for this version: add one");

    bool validated = false;
    if (!QStandardPaths::findExecutable(QStringLiteral("desktop-file-validate")).isEmpty()) {
        const Ran checked = run(QStringLiteral("desktop-file-validate"), {desktop});
        QVERIFY2(checked.exitCode == 0 && checked.output.trimmed().isEmpty(), qPrintable(checked.output));
        validated = true;
    }
    if (!QStandardPaths::findExecutable(QStringLiteral("appstreamcli")).isEmpty()) {
        const Ran checked =
            run(QStringLiteral("appstreamcli"), {QStringLiteral("validate"), QStringLiteral("--no-net"), metainfo});
        QVERIFY2(checked.exitCode == 0, qPrintable(checked.output));
        validated = true;
    }
    if (!validated) {
        QSKIP("neither desktop-file-validate nor appstreamcli is installed (bash packaging/install-deps.sh)");
    }
}

void PackagingTest::manPagesMentionEveryVerb() {
    const QStringList verbs = verbsOfMkb();
    QVERIFY2(verbs.size() >= 8, qPrintable(QStringLiteral("mkb --help lists: ") + verbs.join(u' ')));
    const Ran mkbPage =
        run(QStringLiteral("gzip"), {QStringLiteral("-dc"), installed(QStringLiteral("share/man/man1/mkb.1.gz"))});
    QCOMPARE(mkbPage.exitCode, 0);
    QVERIFY(mkbPage.output.startsWith(QLatin1String(".\\\" Generated")));
    QVERIFY(mkbPage.output.contains(QLatin1String(".TH \"MKB\" \"1\"")));
    for (const QString& verb : verbs) {
        QVERIFY2(mkbPage.output.contains(QStringLiteral(".SS \"mkb %1\"").arg(verb)),
                 qPrintable(QStringLiteral("mkb.1 has no section for the verb ") + verb));
        // The section holds the verb's own --help text.
        const Ran help = run(installed(QStringLiteral("bin/mkb")), {verb, QStringLiteral("--help")});
        const QString usage =
            help.output.section(QLatin1Char('\n'), 0, 0).replace(QLatin1Char('-'), QLatin1String("\\-"));
        QVERIFY2(mkbPage.output.contains(usage), qPrintable(QStringLiteral("mkb.1 lacks: ") + usage));
    }
    const Ran workbenchPage =
        run(QStringLiteral("gzip"),
            {QStringLiteral("-dc"), installed(QStringLiteral("share/man/man1/mkb-workbench.1.gz"))});
    QCOMPARE(workbenchPage.exitCode, 0);
    for (const char* option : {"\\-\\-screenshot", "\\-\\-view", "PROJECT", "\\-\\-version"}) {
        QVERIFY2(workbenchPage.output.contains(QLatin1String(option)),
                 qPrintable(QStringLiteral("mkb-workbench.1 lacks ") + QLatin1String(option)));
    }
}

QTEST_GUILESS_MAIN(PackagingTest)
#include "tst_packaging_deb.moc"
