// Tests of arm names, coordinates "p<NN>_r<k>_<arm>" and cells: formatting, parsing and bad input.
#include "core/protocol/cells.h"
#include "core/vocabulary/arms.h"

#include <QtTest>

using namespace mkb;

class ArmsTest : public QObject {
    Q_OBJECT
private slots:
    void armNamesFollowTheProtocol() {
        QCOMPARE(soloArm("triton").name(), std::string("solo_triton"));
        QCOMPARE(skillArm("cutedsl", "tirx").name(), std::string("cutedsl2tirx_skill"));
    }

    void armsOfAPairAreBothSolosThenBothDirections() {
        const std::vector<Arm> arms = armsForPair("triton", "cuda");
        QCOMPARE(arms.size(), std::size_t(4));
        QCOMPARE(arms[0].name(), std::string("solo_triton"));
        QCOMPARE(arms[1].name(), std::string("solo_cuda"));
        QCOMPARE(arms[2].name(), std::string("triton2cuda_skill"));
        QCOMPARE(arms[3].name(), std::string("cuda2triton_skill"));
    }

    void armParsesBackToItself_data() {
        QTest::addColumn<QString>("text");
        QTest::newRow("solo") << "solo_triton";
        QTest::newRow("solo with underscore") << "solo_cute_dsl";
        QTest::newRow("skill") << "triton2cuda_skill";
        QTest::newRow("skill, paper pair") << "cutedsl2tirx_skill";
        QTest::newRow("skill, digit inside an id") << "fp8x2cuda_skill";
    }
    void armParsesBackToItself() {
        QFETCH(QString, text);
        auto arm = parseArm(text.toStdString());
        QVERIFY2(arm.ok(), arm.ok() ? "" : arm.error().message.c_str());
        QCOMPARE(arm->name(), text.toStdString());
    }

    void skillArmParsesDirection() {
        auto arm = parseArm("triton2cuda_skill");
        QVERIFY(arm.ok());
        QVERIFY(arm->isSkill());
        QCOMPARE(arm->sourceDsl, std::string("triton"));
        QCOMPARE(arm->dsl, std::string("cuda"));
    }

    void badArmIsRefusedWithItsTextNamed_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("empty") << ""
                               << "solo_";
        QTest::newRow("no prefix or suffix") << "triton"
                                             << "neither";
        QTest::newRow("solo without dsl") << "solo_"
                                          << "not a DSL id";
        QTest::newRow("solo upper case") << "solo_Triton"
                                         << "not a DSL id";
        QTest::newRow("skill without 2") << "tritoncuda_skill"
                                         << "no '2'";
        QTest::newRow("skill same dsl") << "cuda2cuda_skill"
                                        << "different";
        QTest::newRow("skill ambiguous") << "a2b2c_skill"
                                         << "ambiguous";
        QTest::newRow("skill empty source") << "2cuda_skill"
                                            << "no '2'";
    }
    void badArmIsRefusedWithItsTextNamed() {
        QFETCH(QString, text);
        QFETCH(QString, mentions);
        auto arm = parseArm(text.toStdString());
        QVERIFY(!arm.ok());
        const QString message = QString::fromStdString(arm.error().message);
        QVERIFY2(message.contains("'" + text + "'"), qPrintable(message));
        QVERIFY2(message.contains(mentions), qPrintable(message));
        QVERIFY(!message.contains('\n'));
    }

    void coordinateFormatsWithTwoDigitProblem() {
        QCOMPARE(formatCoordinate(Coordinate{7, 1, soloArm("triton")}), std::string("p07_r1_solo_triton"));
        QCOMPARE(formatCoordinate(Coordinate{42, 12, skillArm("triton", "cuda")}),
                 std::string("p42_r12_triton2cuda_skill"));
    }

    void coordinateParsesBackToItself_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("number");
        QTest::addColumn<int>("replicate");
        QTest::addColumn<QString>("arm");
        QTest::newRow("solo") << "p07_r1_solo_triton" << 7 << 1 << "solo_triton";
        QTest::newRow("skill") << "p42_r3_cutedsl2tirx_skill" << 42 << 3 << "cutedsl2tirx_skill";
        QTest::newRow("zero problem") << "p00_r1_solo_cuda" << 0 << 1 << "solo_cuda";
        QTest::newRow("replicate 10") << "p05_r10_solo_cuda" << 5 << 10 << "solo_cuda";
        QTest::newRow("three-digit problem") << "p123_r2_solo_cuda" << 123 << 2 << "solo_cuda";
    }
    void coordinateParsesBackToItself() {
        QFETCH(QString, text);
        QFETCH(int, number);
        QFETCH(int, replicate);
        QFETCH(QString, arm);
        auto coordinate = parseCoordinate(text.toStdString());
        QVERIFY2(coordinate.ok(), coordinate.ok() ? "" : coordinate.error().message.c_str());
        QCOMPARE(coordinate->problemNumber, number);
        QCOMPARE(coordinate->replicate, replicate);
        QCOMPARE(coordinate->arm.name(), arm.toStdString());
        QCOMPARE(formatCoordinate(*coordinate), text.toStdString());
    }

    void badCoordinateIsRefusedNamingThePart_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("empty") << ""
                               << "start with 'p'";
        QTest::newRow("no p") << "07_r1_solo_triton"
                              << "start with 'p'";
        QTest::newRow("one digit") << "p7_r1_solo_triton"
                                   << "two digits";
        QTest::newRow("letters for number") << "pxx_r1_solo_triton"
                                            << "two digits";
        QTest::newRow("no replicate") << "p07_solo_triton"
                                      << "'_r'";
        QTest::newRow("replicate 0") << "p07_r0_solo_triton"
                                     << "starts at 1";
        QTest::newRow("replicate leading zero") << "p07_r01_solo_triton"
                                                << "starts at 1";
        QTest::newRow("replicate not a number") << "p07_rx_solo_triton"
                                                << "replicate must be a number";
        QTest::newRow("no arm") << "p07_r1"
                                << "followed by '_'";
        QTest::newRow("bad arm") << "p07_r1_triton"
                                 << "bad arm";
        QTest::newRow("trailing junk in arm") << "p07_r1_solo_tri ton"
                                              << "not a DSL id";
        QTest::newRow("huge number") << "p12345678901_r1_solo_cuda"
                                     << "two digits";
    }
    void badCoordinateIsRefusedNamingThePart() {
        QFETCH(QString, text);
        QFETCH(QString, mentions);
        auto coordinate = parseCoordinate(text.toStdString());
        QVERIFY2(!coordinate.ok(), qPrintable(text));
        const QString message = QString::fromStdString(coordinate.error().message);
        QVERIFY2(message.startsWith("bad coordinate '" + text + "'"), qPrintable(message));
        QVERIFY2(message.contains(mentions), qPrintable(message));
        QVERIFY(!message.contains('\n'));
    }

    void cellNamesSourceBaseAndSkill() {
        const Cell cell{7, Direction{"triton", "cuda"}, 2};
        QCOMPARE(formatCoordinate(cell.source()), std::string("p07_r2_solo_triton"));
        QCOMPARE(formatCoordinate(cell.base()), std::string("p07_r2_solo_cuda"));
        QCOMPARE(formatCoordinate(cell.skill()), std::string("p07_r2_triton2cuda_skill"));
        QCOMPARE(cell.direction.name(), std::string("triton2cuda"));
    }

    void cellsCoverProblemsDirectionsAndReplicates() {
        const std::vector<Cell> cells = cellsFor({1, 4}, "triton", "cuda", 3);
        QCOMPARE(cells.size(), std::size_t(2 * 2 * 3));
        QCOMPARE(cells.front(), (Cell{1, Direction{"triton", "cuda"}, 1}));
        QCOMPARE(cells.back(), (Cell{4, Direction{"cuda", "triton"}, 3}));
    }

    void skillCoordinateFindsItsCell() {
        auto cell = cellOfSkill(Coordinate{3, 2, skillArm("cuda", "triton")});
        QVERIFY(cell.ok());
        QCOMPARE(formatCoordinate(cell->source()), std::string("p03_r2_solo_cuda"));
        QCOMPARE(formatCoordinate(cell->base()), std::string("p03_r2_solo_triton"));
        QVERIFY(!cellOfSkill(Coordinate{3, 2, soloArm("cuda")}).ok());
    }
};

QTEST_GUILESS_MAIN(ArmsTest)
#include "tst_arms.moc"
