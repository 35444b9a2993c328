// Claim tags through core (core/io/skill_annotations): a tag quotes its byte range of the skill, lists in range order,
// deletes by id, and a range outside the skill's text is refused with a message that says what to do.
#include "core/io/skill_annotations.h"
#include "store_fixtures.h"

#include <QTemporaryDir>
#include <QTest>

class SkillAnnotationsTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    std::unique_ptr<mkb::Store> store_;
    mkb::SkillRecord skill_;
    int stores_ = 0; // each test function gets a store of its own

private slots:
    void init() {
        QVERIFY(dir_.isValid());
        auto opened = mkb::Store::open(
            std::filesystem::path(dir_.filePath(QStringLiteral("tags-%1.sqlite").arg(++stores_)).toStdString()),
            mkb::OpenMode::CreateIfMissing);
        QVERIFY(opened);
        store_ = std::move(opened).value();
        mkb::Result<std::int64_t> trial = store_->insertTrial(storetest::sampleTrial("model-a", 1, 1, "solo_triton"));
        QVERIFY(trial);
        mkb::TrialOutcome outcome;
        outcome.skillText = "# Skill\nTile by 128. Use one program per row.\n";
        QVERIFY(store_->finishTrial(*trial, outcome));
        auto skill = store_->skillOfTrial(*trial);
        QVERIFY(skill && skill->has_value());
        skill_ = **skill;
    }
    void cleanup() { store_.reset(); }

    void aTagQuotesItsByteRangeAndListsInRangeOrder() {
        const std::string text = skill_.text;
        const auto later = std::int64_t(text.find("one program per row"));
        const auto earlier = std::int64_t(text.find("Tile by 128"));
        auto second = mkb::tagClaim(*store_, skill_, {later, later + 19, mkb::AnnotationTag::Contradicted, "a block"});
        QVERIFY2(second, second ? "" : second.error().message.c_str());
        auto first = mkb::tagClaim(*store_, skill_, {earlier, earlier + 11, mkb::AnnotationTag::Supported, ""});
        QVERIFY(first);
        QVERIFY(second->id > 0 && first->id != second->id);
        QCOMPARE(second->quotedText, std::string("one program per row"));

        auto listed = mkb::skillAnnotations(*store_, skill_.id);
        QVERIFY(listed);
        QCOMPARE(listed->size(), std::size_t(2));
        QCOMPARE((*listed)[0].quotedText, std::string("Tile by 128"));
        QVERIFY((*listed)[0].tag == mkb::AnnotationTag::Supported);
        QCOMPARE((*listed)[1].id, second->id);
        QCOMPARE((*listed)[1].note, std::string("a block"));
        QCOMPARE((*listed)[1].rangeStart, later);
    }

    void deletingATagRemovesOnlyThatTag() {
        auto kept = mkb::tagClaim(*store_, skill_, {0, 7, mkb::AnnotationTag::Other, ""});
        auto dropped = mkb::tagClaim(*store_, skill_, {8, 19, mkb::AnnotationTag::Unsupported, ""});
        QVERIFY(kept && dropped);
        QVERIFY(mkb::deleteClaimTag(*store_, dropped->id));
        auto listed = mkb::skillAnnotations(*store_, skill_.id);
        QVERIFY(listed);
        QCOMPARE(listed->size(), std::size_t(1));
        QCOMPARE(listed->front().id, kept->id);
        QVERIFY(!mkb::deleteClaimTag(*store_, dropped->id)); // already gone
    }

    void aRangeOutsideTheTextOrEmptyIsRefusedAndNothingIsStored() {
        const auto size = std::int64_t(skill_.text.size());
        for (const auto& [start, end] : {std::pair<std::int64_t, std::int64_t>{-1, 3}, {4, 4}, {5, 2}, {0, size + 1}}) {
            auto refused = mkb::tagClaim(*store_, skill_, {start, end, mkb::AnnotationTag::Other, ""});
            QVERIFY(!refused);
            QVERIFY(QString::fromStdString(refused.error().message).contains("select the claim"));
            QVERIFY(QString::fromStdString(refused.error().message).contains("skill #" + QString::number(skill_.id)));
        }
        QVERIFY(mkb::tagClaim(*store_, skill_, {0, size, mkb::AnnotationTag::Other, ""})); // the whole text is fine
        QCOMPARE(mkb::skillAnnotations(*store_, skill_.id)->size(), std::size_t(1));
    }
};

QTEST_GUILESS_MAIN(SkillAnnotationsTest)
#include "tst_skill_annotations.moc"
