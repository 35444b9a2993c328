// Tests of the families `mkb import --problems DIR` files problems under when a results.json does not name one
// (core/io/import_families.h).
#include "core/io/import_families.h"
#include "support/testpaths.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

namespace fs = std::filesystem;

class ImportFamiliesTest : public QObject {
    Q_OBJECT
private slots:
    void eachShippedProblemIsKeyedByItsNumberAndSlug() {
        const std::map<std::string, std::string> families = mkb::familiesByProblem({mkbtest::sourceDir() / "problems"});
        QVERIFY2(families.size() > 10, "the shipped suite has more than ten problems");
        QCOMPARE(families.at("01_gqa_decode_attention"), std::string("attention"));
        for (const auto& [key, family] : families) {
            QVERIFY2(key.size() > 3 && key[2] == '_', key.c_str());
            QVERIFY2(!family.empty(), key.c_str());
        }
    }

    void noSuiteAndAnEmptyFolderGiveNoFamilies() {
        QVERIFY(mkb::familiesByProblem({}).empty());
        QTemporaryDir dir;
        QVERIFY(mkb::familiesByProblem({fs::path(dir.path().toStdString())}).empty());
    }

    void aMalformedProblemFileIsLeftOut() {
        QTemporaryDir dir;
        const fs::path file = fs::path(dir.path().toStdString()) / "attention" / "03_broken.py";
        fs::create_directories(file.parent_path());
        std::ofstream(file) << "this is not python at all (\n";
        QVERIFY(mkb::familiesByProblem({fs::path(dir.path().toStdString())}).empty());
    }
};

QTEST_GUILESS_MAIN(ImportFamiliesTest)
#include "tst_import_families.moc"
