// The reply convention: named fences, the line-above form, DONE, and every malformed case.
#include "core/agents/reply_parser.h"

#include <QtTest>

#include <string>

using mkb::ReplyDefect;

namespace {

const std::size_t kLimit = 300000;

} // namespace

class ReplyParserTest : public QObject {
    Q_OBJECT
private slots:
    void titleAttributeNamesTheFile() {
        const auto parse =
            mkb::parseReply("Plan first.\n\n```python title=kernel.py\ndef solve(x):\n    return x\n```\n\n"
                            "```markdown title=\"SKILL.md\"\n- a lesson\n```\n",
                            kLimit);
        QCOMPARE(parse.defect, ReplyDefect::None);
        QCOMPARE(parse.reply.kernel.value_or("<none>"), std::string("def solve(x):\n    return x\n"));
        QCOMPARE(parse.reply.skill.value_or("<none>"), std::string("- a lesson\n"));
        QVERIFY(!parse.reply.done);
    }

    void lineAboveNamesTheFile_data() {
        QTest::addColumn<QString>("above");
        QTest::newRow("bare") << "kernel.py";
        QTest::newRow("backticks") << "`kernel.py`";
        QTest::newRow("bold") << "**kernel.py**";
        QTest::newRow("heading") << "### kernel.py";
        QTest::newRow("label") << "File: kernel.py";
        QTest::newRow("sentence") << "Here is the updated `kernel.py`:";
    }

    void lineAboveNamesTheFile() {
        QFETCH(QString, above);
        const std::string text = above.toStdString() + "\n```python\ndef solve(x):\n    return x\n```\n";
        const auto parse = mkb::parseReply(text, kLimit);
        QCOMPARE(parse.defect, ReplyDefect::None);
        QVERIFY(parse.reply.kernel.has_value());
    }

    void otherForms() {
        // ```kernel.py as the info string, CRLF line ends, tildes, a four-backtick SKILL.md holding a fence.
        auto parse = mkb::parseReply("```kernel.py\r\ndef solve(x):\r\n    return x\r\n```\r\n", kLimit);
        QCOMPARE(parse.defect, ReplyDefect::None);
        QCOMPARE(parse.reply.kernel.value_or(""), std::string("def solve(x):\n    return x\n"));
        parse = mkb::parseReply("~~~python file=kernel.py\npass\n~~~\n", kLimit);
        QCOMPARE(parse.defect, ReplyDefect::None);
        parse = mkb::parseReply("SKILL.md\n````markdown\n- lesson\n```\nnot code\n```\n````\n"
                                "kernel.py\n```\npass\n```\n",
                                kLimit);
        QCOMPARE(parse.defect, ReplyDefect::None);
        QCOMPARE(parse.reply.skill.value_or(""), std::string("- lesson\n```\nnot code\n```\n"));
        QCOMPARE(parse.reply.kernel.value_or(""), std::string("pass\n"));
    }

    void unnamedBlocksBesideANamedOneAreIgnored() {
        const auto parse =
            mkb::parseReply("Shapes:\n```text\n(4, 1024)\n```\n\n```python title=kernel.py\npass\n```\n", kLimit);
        QCOMPARE(parse.defect, ReplyDefect::None);
        QCOMPARE(parse.reply.kernel.value_or(""), std::string("pass\n"));
    }

    void doneIsALineOutsideBlocks() {
        auto parse = mkb::parseReply("```markdown title=SKILL.md\n- x\n```\n\nDONE\n", kLimit);
        QCOMPARE(parse.defect, ReplyDefect::None);
        QVERIFY(parse.reply.done);
        parse = mkb::parseReply("**DONE.**", kLimit);
        QVERIFY(parse.reply.done);
        // DONE inside a block, or inside a sentence, is not the signal.
        parse = mkb::parseReply("```python title=kernel.py\nDONE = 1\n```\nI am not DONE yet.\n", kLimit);
        QCOMPARE(parse.defect, ReplyDefect::None);
        QVERIFY(!parse.reply.done);
    }

    void skillOnlyReplyIsWellFormed() {
        const auto parse = mkb::parseReply("```markdown title=SKILL.md\n- x\n```\n", kLimit);
        QCOMPARE(parse.defect, ReplyDefect::None);
        QVERIFY(!parse.reply.kernel);
        QVERIFY(parse.reply.skill);
    }

    void malformedReplies_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<int>("defect");
        QTest::newRow("empty") << QByteArray("") << int(ReplyDefect::Empty);
        QTest::newRow("blank") << QByteArray(" \n\t\n") << int(ReplyDefect::Empty);
        QTest::newRow("prose") << QByteArray("I would use a block size of 256.") << int(ReplyDefect::NoCodeBlock);
        QTest::newRow("unnamed") << QByteArray("```python\npass\n```\n") << int(ReplyDefect::UnnamedCodeBlock);
        QTest::newRow("two kernels") << QByteArray(
                                            "```python title=kernel.py\na\n```\n```python title=kernel.py\nb\n```\n")
                                     << int(ReplyDefect::TwoKernels);
        QTest::newRow("two skills") << QByteArray("```md title=SKILL.md\na\n```\nSKILL.md\n```\nb\n```\n")
                                    << int(ReplyDefect::TwoSkills);
        QTest::newRow("wrong name") << QByteArray("```cpp title=kernel.cu\nint x;\n```\n")
                                    << int(ReplyDefect::WrongFileName);
        QTest::newRow("wrong name above")
            << QByteArray("solution.py\n```python\npass\n```\n") << int(ReplyDefect::WrongFileName);
        QTest::newRow("wrong name beside kernel")
            << QByteArray("```python title=kernel.py\npass\n```\n```python title=helper.py\npass\n```\n")
            << int(ReplyDefect::WrongFileName);
        QTest::newRow("unterminated") << QByteArray("```python title=kernel.py\ndef solve(x):\n")
                                      << int(ReplyDefect::UnterminatedBlock);
        QTest::newRow("empty kernel") << QByteArray("```python title=kernel.py\n\n```\n")
                                      << int(ReplyDefect::EmptyKernel);
        QTest::newRow("invalid utf-8") << QByteArray("```python title=kernel.py\n# \xff\xfe\npass\n```\n")
                                       << int(ReplyDefect::InvalidUtf8);
        QTest::newRow("huge") << QByteArray("```python title=kernel.py\n") + QByteArray(300001, 'x') +
                                     QByteArray("\n```\n")
                              << int(ReplyDefect::TooLarge);
    }

    void malformedReplies() {
        QFETCH(QByteArray, text);
        QFETCH(int, defect);
        const auto parse = mkb::parseReply(std::string_view(text.constData(), std::size_t(text.size())), kLimit);
        QCOMPARE(int(parse.defect), defect);
        QVERIFY(!parse.detail.empty());
    }
};

QTEST_GUILESS_MAIN(ReplyParserTest)
#include "tst_reply_parser.moc"
