// Tests of the depth-bounded JSON reader (core/util/json_input) and of the verdict parser that goes through it.
#include "core/util/json_input.h"
#include "core/wire/verdict_json.h"

#include <QTest>

#include <string>

namespace {

std::string nested(std::size_t depth, char open = '[', char close = ']', const std::string& inner = "") {
    return std::string(depth, open) + inner + std::string(depth, close);
}

} // namespace

class TestJsonInput : public QObject {
    Q_OBJECT

private slots:
    void nestingUpToTheBoundParsesAndOneMoreLevelIsRefused() {
        QVERIFY(mkb::parseJsonInput(nested(mkb::kMaxJsonDepth)).ok());
        auto deep = mkb::parseJsonInput(nested(mkb::kMaxJsonDepth + 1));
        QVERIFY(!deep.ok());
        QVERIFY(deep.error().message.find("nested deeper than 256 levels") != std::string::npos);
        QVERIFY(deep.error().message.find("line 1, column 257") != std::string::npos);
    }

    void aHundredThousandLevelsAreRefusedWithoutCrashing() {
        const std::string arrays = nested(100000);
        QVERIFY(!mkb::parseJsonInput(arrays).ok());
        QVERIFY(!mkb::parseJsonInput<nlohmann::ordered_json>(arrays).ok());
        QVERIFY(mkb::parseJsonInputOrDiscarded(arrays).is_discarded());
        std::string objects;
        for (int i = 0; i < 100000; ++i) {
            objects += "{\"a\":";
        }
        objects += "1" + std::string(100000, '}');
        QVERIFY(!mkb::checkJsonDepth(objects).ok());
    }

    void bracketsInsideStringsDoNotCount() {
        const std::string text = "{\"error\": \"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"}";
        auto parsed = mkb::parseJsonInput(text);
        QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().message.c_str());
        QCOMPARE((*parsed)["error"].get<std::string>().size(), std::size_t(2001));
    }

    void aSyntaxErrorGivesItsLineAndColumnButNotTheInputBytes() {
        auto broken = mkb::parseJsonInput("{\n  \"rewards\": {\"passed\": 1.0,\n  \"secret\x01\": tru");
        QVERIFY(!broken.ok());
        const std::string& message = broken.error().message;
        QVERIFY2(message.find("syntax error") != std::string::npos, message.c_str());
        QVERIFY2(message.find("line 3") != std::string::npos, message.c_str());
        QVERIFY2(message.find("last read") == std::string::npos, message.c_str());
        QVERIFY2(message.find('\x01') == std::string::npos, message.c_str());
        QVERIFY2(message.find('\n') == std::string::npos, message.c_str());
        QVERIFY(message.find("json.exception") == std::string::npos);
    }

    void anEmptyInputSaysItIsEmpty() {
        auto empty = mkb::parseJsonInput("");
        QVERIFY(!empty.ok());
        QVERIFY2(empty.error().message.find("empty") != std::string::npos, empty.error().message.c_str());
    }

    void theVerdictParserRefusesADeepVerdictWithItsDepth() {
        const std::string verdict = R"({"imported": true, "correct": true, "passed": true, "speedup_vs_eager": 1.5, )"
                                    R"("details": )" +
                                    nested(100000) + "}";
        auto parsed = mkb::verdictFromJson(verdict);
        QVERIFY(!parsed.ok());
        QVERIFY2(parsed.error().message.find("nested deeper than 256") != std::string::npos,
                 parsed.error().message.c_str());
        QVERIFY2(parsed.error().message.find("verdict") != std::string::npos, parsed.error().message.c_str());
        const std::string shallow = R"({"imported": true, "correct": true, "passed": true, "speedup_vs_eager": 1.5, )"
                                    R"("details": )" +
                                    nested(10) + "}";
        QVERIFY(mkb::verdictFromJson(shallow).ok());
    }
};

QTEST_GUILESS_MAIN(TestJsonInput)
#include "tst_json_input.moc"
