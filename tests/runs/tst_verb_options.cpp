// Every mkb verb's options come from one declaration: each option its --help lists is one its parser accepts, and
// the generated lines read as the man page generator expects (term, two spaces, description).
#include "support/cli_run.h"

#include <QRegularExpression>
#include <QtTest>

using mkbtest::CliRun;

namespace {

CliRun mkb(const QStringList& args) {
    return mkbtest::runMkbIn(args, "/nonexistent/never-used.sqlite", 60000);
}

/// The verbs `mkb --help` lists.
QStringList verbs() {
    QStringList names;
    bool inVerbs = false;
    for (const QString& line : mkb({"--help"}).out.split('\n')) {
        if (line == "verbs:") {
            inVerbs = true;
        } else if (inVerbs && line.startsWith("  ")) {
            names << line.trimmed().section(' ', 0, 0);
        } else if (inVerbs) {
            break;
        }
    }
    return names;
}

/// (name, takes a value) for each "  --name [VALUE]" entry of a help's option lists.
QList<QPair<QString, bool>> listedOptions(const QString& help) {
    static const QRegularExpression entry("^  --([a-z0-9-]+)( [^ ]+)?(  |$)");
    QList<QPair<QString, bool>> options;
    for (const QString& line : help.split('\n')) {
        const QRegularExpressionMatch match = entry.match(line);
        if (match.hasMatch()) {
            options.append({match.captured(1), !match.captured(2).isEmpty()});
        }
    }
    return options;
}

} // namespace

class VerbOptionsTest : public QObject {
    Q_OBJECT

private slots:
    void everyOptionAVerbsHelpListsIsOneItsParserAccepts() {
        const QStringList names = verbs();
        QVERIFY2(names.size() >= 14, qPrintable(names.join(' ')));
        // Actions that take options of their own come first on the command line.
        const QList<QStringList> actionPrefixes = {{}, {"list"}, {"show"}, {"validate"}, {"kernelbenchx-corpus"}};
        int checked = 0;
        for (const QString& verb : names) {
            const CliRun help = mkb({verb, "--help"});
            QCOMPARE(help.exitCode, 0);
            QVERIFY2(help.out.contains("\noptions:\n"), qPrintable(verb));
            const auto options = listedOptions(help.out);
            QVERIFY2(!options.isEmpty(), qPrintable(verb));
            for (const auto& [option, takesValue] : options) {
                bool accepted = false;
                for (const QStringList& prefix : actionPrefixes) {
                    QStringList args = QStringList{verb} + prefix + QStringList{"--" + option};
                    if (takesValue) {
                        args << "1";
                    }
                    args << "--help";
                    const CliRun run = mkb(args);
                    if (!run.err.contains("unknown option")) {
                        accepted = true;
                        break;
                    }
                }
                QVERIFY2(accepted, qPrintable("mkb " + verb + " --" + option));
                ++checked;
            }
        }
        QVERIFY(checked > 100);
    }

    void anUnknownOptionIsRefusedNamingIt() {
        for (const QString& verb : verbs()) {
            const CliRun run = mkb({verb, "--no-such-option"});
            QCOMPARE(run.exitCode, 2);
            QVERIFY2(run.err.contains("--no-such-option") || run.err.contains("action") ||
                         run.err.contains("name an action"),
                     qPrintable(verb + ": " + run.err));
        }
    }
};

QTEST_GUILESS_MAIN(VerbOptionsTest)
#include "tst_verb_options.moc"
