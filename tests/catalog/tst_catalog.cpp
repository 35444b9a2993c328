// Tests of the problem catalog: layout rules, every malformed case, MKB_META parsing, fingerprints, find/select.
#include "catalog/fixture_suite.h"
#include "support/testpaths.h"

#include "core/catalog/catalog.h"
#include "core/catalog/problem_meta.h"
#include "core/catalog/python_source.h"

#include <QtTest>

#include <set>

using mkbtest::FixtureSuite;
using mkbtest::problemText;

namespace {

/// The one issue about `path`, or "" when there is none; fails the test when there are several.
std::string issueFor(const mkb::Catalog& catalog, const std::filesystem::path& path) {
    std::string found;
    int count = 0;
    for (const mkb::CatalogIssue& issue : catalog.issues) {
        if (issue.path == path) {
            found = issue.message;
            ++count;
        }
    }
    if (count > 1) {
        QTest::qFail(("several issues for " + path.string()).c_str(), __FILE__, __LINE__);
    }
    return found;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

class CatalogTest : public QObject {
    Q_OBJECT
private slots:
    void wellFormedSuiteLoadsSortedByNumber() {
        FixtureSuite suite;
        suite.write("moe/02_top2_router.py", problemText("Router."));
        suite.write("attention/01_gqa_decode.py", problemText("Decode."));
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QVERIFY(catalog.issues.empty());
        QCOMPARE(catalog.problems.size(), std::size_t(2));
        QCOMPARE(catalog.problems[0].name(), std::string("attention/01_gqa_decode"));
        QCOMPARE(catalog.problems[0].title, std::string("Decode."));
        QCOMPARE(catalog.problems[0].suite, std::string("suite"));
        QCOMPARE(catalog.problems[1].code(), std::string("p02"));
        QVERIFY(catalog.problems[1].path.is_absolute());
    }

    void ignoredPartsAreNotProblems() {
        FixtureSuite suite;
        suite.write("attention/01_ok.py", problemText());
        suite.write("attention/_solutions/01_ok.triton.py", "not a problem");
        suite.write("_drafts/whatever.py", "");
        suite.write(".hidden/attention/09_x.py", "");
        suite.write("attention/.02_hidden.py", "");
        suite.write("attention/README.md", "notes");
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QVERIFY(catalog.issues.empty());
        QCOMPARE(catalog.problems.size(), std::size_t(1));
    }

    void badFileNameIsAnIssue_data() {
        QTest::addColumn<QString>("fileName");
        QTest::newRow("one digit") << "1_slug.py";
        QTest::newRow("three digits") << "001_slug.py";
        QTest::newRow("upper case slug") << "01_Slug.py";
        QTest::newRow("double underscore") << "01_a__b.py";
        QTest::newRow("trailing underscore") << "01_slug_.py";
        QTest::newRow("dash") << "01_my-slug.py";
        QTest::newRow("no slug") << "01.py";
    }
    void badFileNameIsAnIssue() {
        QFETCH(QString, fileName);
        FixtureSuite suite;
        auto bad = suite.write("attention/" + fileName.toStdString(), problemText());
        suite.write("attention/02_good.py", problemText());
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QVERIFY(contains(issueFor(catalog, bad), "bad file name"));
        QCOMPARE(catalog.problems.size(), std::size_t(1)); // loading went on
    }

    void badFamilyNameIsAnIssue() {
        FixtureSuite suite;
        auto bad = suite.write("Attention/01_x.py", problemText());
        suite.write("9lives/02_y.py", problemText());
        suite.write("Docs/readme.md", "no python here, so no issue");
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QVERIFY(contains(issueFor(catalog, bad.parent_path()), "bad family name 'Attention'"));
        QVERIFY(contains(issueFor(catalog, suite.root() / "9lives"), "bad family name"));
        QCOMPARE(catalog.issues.size(), std::size_t(2));
        QVERIFY(catalog.problems.empty());
    }

    void duplicateNumberNamesBothFiles() {
        FixtureSuite suite;
        auto first = suite.write("attention/03_a.py", problemText());
        auto second = suite.write("moe/03_b.py", problemText());
        suite.write("moe/04_c.py", problemText());
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QVERIFY(contains(issueFor(catalog, first), "duplicate number 03"));
        QVERIFY(contains(issueFor(catalog, first), second.string()));
        QVERIFY(contains(issueFor(catalog, second), first.string()));
        QCOMPARE(catalog.problems.size(), std::size_t(1));
        QCOMPARE(catalog.problems[0].number, 4);
    }

    void numbersAreUniqueAcrossRoots() {
        FixtureSuite one, two;
        auto a = one.write("attention/05_a.py", problemText());
        auto b = two.write("moe/05_b.py", problemText());
        mkb::Catalog catalog = mkb::loadCatalog({one.root(), two.root()});
        QVERIFY(contains(issueFor(catalog, a), "duplicate number 05"));
        QVERIFY(contains(issueFor(catalog, b), "duplicate number 05"));
    }

    void threeDigitNumbersFrom100AreProblemsWithOneSpellingEach() {
        FixtureSuite suite;
        suite.write("activation/07_gelu.py", problemText("Gelu."));
        suite.write("math/100_zeta.py", problemText("Zeta."));
        suite.write("math/176_trunc.py", problemText("Trunc."));
        auto leadingZero = suite.write("math/007_floor.py", problemText());
        auto fourDigits = suite.write("math/1000_log.py", problemText());
        auto twin = suite.write("reduce/100_sum.py", problemText());
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QCOMPARE(catalog.problems.size(), std::size_t(2));
        QCOMPARE(catalog.problems[0].number, 7);
        QCOMPARE(catalog.problems[1].name(), std::string("math/176_trunc"));
        QCOMPARE(catalog.problems[1].code(), std::string("p176"));
        QVERIFY(contains(issueFor(catalog, leadingZero), "bad file name"));
        QVERIFY(contains(issueFor(catalog, fourDigits), "bad file name"));
        QVERIFY(contains(issueFor(catalog, twin), "duplicate number 100"));
        QCOMPARE(catalog.find("p176"), &catalog.problems[1]);
        QCOMPARE(catalog.find("176"), &catalog.problems[1]);
        QCOMPARE(catalog.find("176_trunc"), &catalog.problems[1]);
        QCOMPARE(catalog.find("math/176_trunc.py"), &catalog.problems[1]);
        QCOMPARE(catalog.select("p1*").size(), std::size_t(1));
        QVERIFY(catalog.duplicateSelectedBy("p100") != nullptr);
        QCOMPARE(catalog.issuesFor("100").size(), std::size_t(2));
    }

    void inPlaceOutputsPrecisionAndOriginAreRead() {
        FixtureSuite suite;
        suite.write("index/01_a.py", problemText("A.", "MKB_META = {'inplace_outputs': [1, 0], 'precision': 'bf16', "
                                                       "'origin': 'kernelbenchx:Index/index_fill_.py'}\n"));
        suite.write("index/02_b.py", problemText("B."));
        auto repeated = suite.write("index/03_c.py", problemText("C.", "MKB_META = {'inplace_outputs': [0, 0]}\n"));
        auto negative = suite.write("index/04_d.py", problemText("D.", "MKB_META = {'inplace_outputs': [-1]}\n"));
        auto notList = suite.write("index/05_e.py", problemText("E.", "MKB_META = {'inplace_outputs': 0}\n"));
        auto precision = suite.write("index/06_f.py", problemText("F.", "MKB_META = {'precision': 'fp8'}\n"));
        auto origin = suite.write("index/07_g.py", problemText("G.", "MKB_META = {'origin': ''}\n"));
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QCOMPARE(catalog.problems.size(), std::size_t(2));
        QCOMPARE(catalog.problems[0].meta.inplaceOutputs, (std::vector<int>{1, 0}));
        QCOMPARE(catalog.problems[0].meta.precision, std::string("bf16"));
        QCOMPARE(catalog.problems[0].meta.origin, std::string("kernelbenchx:Index/index_fill_.py"));
        QVERIFY(catalog.problems[1].meta.inplaceOutputs.empty());
        for (const auto& bad : {repeated, negative, notList}) {
            QVERIFY2(contains(issueFor(catalog, bad), "'inplace_outputs' must be a list of input positions"),
                     issueFor(catalog, bad).c_str());
        }
        QVERIFY2(contains(issueFor(catalog, precision), "'precision' \"fp8\" is not a precision variant; use one of "
                                                        "fp32, fp16, bf16, int8, w8a8, w4a16"),
                 issueFor(catalog, precision).c_str());
        QVERIFY(contains(issueFor(catalog, origin), "'origin' must be a non-empty string"));
    }

    void noSolutionReasonsAreReadAndABadOneNamesTheFileAndTheKey() {
        FixtureSuite suite;
        suite.write("moe/01_a.py", problemText("A.", "MKB_META = {'no_solution': {'pallas': 'needs an atomic "
                                                     "scatter-add', 'numba': 'no tensor cores'}}\n"));
        suite.write("moe/02_b.py", problemText("B."));
        auto unknown = suite.write("moe/03_c.py", problemText("C.", "MKB_META = {'no_solution': {'jax': 'x'}}\n"));
        auto empty = suite.write("moe/04_d.py", problemText("D.", "MKB_META = {'no_solution': {'pallas': ' '}}\n"));
        auto number = suite.write("moe/05_e.py", problemText("E.", "MKB_META = {'no_solution': {'numba': 3}}\n"));
        auto notDict = suite.write("moe/06_f.py", problemText("F.", "MKB_META = {'no_solution': ['pallas']}\n"));
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QCOMPARE(catalog.problems.size(), std::size_t(2));
        QCOMPARE(catalog.problems[0].meta.noSolution,
                 (std::map<std::string, std::string>{{"numba", "no tensor cores"},
                                                     {"pallas", "needs an atomic scatter-add"}}));
        QVERIFY(catalog.problems[1].meta.noSolution.empty());
        QCOMPARE(catalog.issues.size(), std::size_t(4));
        QVERIFY2(contains(issueFor(catalog, unknown), "'no_solution.jax' names no DSL; use one of cuda, cutedsl, "
                                                      "numba, pallas, tirx, triton"),
                 issueFor(catalog, unknown).c_str());
        QVERIFY2(contains(issueFor(catalog, empty), "'no_solution.pallas' must be a non-empty string saying why"),
                 issueFor(catalog, empty).c_str());
        QVERIFY2(contains(issueFor(catalog, number), "'no_solution.numba' must be a non-empty string"),
                 issueFor(catalog, number).c_str());
        QVERIFY2(contains(issueFor(catalog, notDict), "'no_solution' must be a dict from DSL name to the reason"),
                 issueFor(catalog, notDict).c_str());
    }

    void missingFunctionsAreIssues() {
        FixtureSuite suite;
        auto noReference = suite.write("attention/01_a.py", "\"\"\"T.\"\"\"\ndef make_inputs(device='cuda'):\n"
                                                            "    return []\n");
        auto noInputs = suite.write("attention/02_b.py", "\"\"\"T.\"\"\"\ndef reference(x):\n    return x\n");
        auto nested = suite.write("attention/03_c.py", "\"\"\"T.\"\"\"\nclass K:\n    def reference(self):\n"
                                                       "        pass\n    def make_inputs(self):\n        pass\n"
                                                       "text = '''\ndef reference(x):\n'''\n");
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QVERIFY(contains(issueFor(catalog, noReference), "missing `def reference(`"));
        QVERIFY(contains(issueFor(catalog, noInputs), "missing `def make_inputs(`"));
        int nestedIssues = 0;
        for (const auto& issue : catalog.issues) {
            nestedIssues += issue.path == nested;
        }
        QCOMPARE(nestedIssues, 2); // methods and text in strings do not count
        QVERIFY(catalog.problems.empty());
    }

    void docstringRules_data() {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("expected");
        QTest::newRow("none") << "import torch\n"
                              << "no module docstring";
        QTest::newRow("comment only") << "# Title\nimport torch\n"
                                      << "no module docstring";
        QTest::newRow("not first") << "import torch\n\"\"\"Title.\"\"\"\n"
                                   << "no module docstring";
        QTest::newRow("expression") << "\"Title\" + x\n"
                                    << "no module docstring";
        QTest::newRow("f-string") << "f\"\"\"Title {x}\"\"\"\n"
                                  << "no module docstring";
        QTest::newRow("bytes") << "b\"Title\"\n"
                               << "no module docstring";
        QTest::newRow("empty") << "\"\"\"  \"\"\"\n"
                               << "docstring is empty";
        QTest::newRow("several lines") << "\"\"\"Title.\n\nMore words.\n\"\"\"\n"
                                       << "spans several lines";
    }
    void docstringRules() {
        QFETCH(QString, source);
        QFETCH(QString, expected);
        FixtureSuite suite;
        auto path = suite.write("attention/01_a.py", source.toStdString() + "def make_inputs(device='cuda'):\n"
                                                                            "    return []\ndef reference(): pass\n");
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QVERIFY2(contains(issueFor(catalog, path), expected.toStdString()), issueFor(catalog, path).c_str());
    }

    void docstringVariantsGiveTheTitle() {
        FixtureSuite suite;
        suite.write("attention/01_a.py",
                    "#!/usr/bin/env python3\n# comment\n'''  Single quotes.  '''\n" + problemText("x").substr(7));
        suite.write("attention/02_b.py", "\"Plain \" 'concatenated.'\n" + problemText("x").substr(7));
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QVERIFY(catalog.issues.empty());
        QCOMPARE(catalog.problems[0].title, std::string("Single quotes."));
        QCOMPARE(catalog.problems[1].title, std::string("Plain concatenated."));
    }

    void notUtf8GivesTheByteOffset() {
        FixtureSuite suite;
        std::string text = problemText();
        text.insert(10, "\xff\xfe");
        auto path = suite.write("attention/01_a.py", text);
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QVERIFY2(contains(issueFor(catalog, path), "not UTF-8") && contains(issueFor(catalog, path), "offset 10"),
                 issueFor(catalog, path).c_str());
    }

    void emptyFileIsAnIssue() {
        FixtureSuite suite;
        auto empty = suite.write("attention/01_a.py", "");
        auto blank = suite.write("attention/02_b.py", "\n  \n\t\n");
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QVERIFY(contains(issueFor(catalog, empty), "empty file"));
        QVERIFY(contains(issueFor(catalog, blank), "empty file"));
    }

    void nestedTooDeepIsAnIssue() {
        FixtureSuite suite;
        auto deep = suite.write("attention/sub/01_a.py", problemText());
        auto deeper = suite.write("attention/sub/more/02_b.py", problemText());
        suite.write("attention/_private/03_c.py", problemText());
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QVERIFY(contains(issueFor(catalog, deep), "nested too deep"));
        QVERIFY(contains(issueFor(catalog, deeper), "nested too deep"));
        QCOMPARE(catalog.issues.size(), std::size_t(2));
    }

    void pythonDirectlyInRootIsAnIssue() {
        FixtureSuite suite;
        auto loose = suite.write("01_loose.py", problemText());
        suite.write("conftest.txt", "ignored");
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QVERIFY(contains(issueFor(catalog, loose), "directly in the suite root"));
    }

    void missingRootIsAnIssue() {
        mkb::Catalog catalog = mkb::loadCatalog({"/nonexistent/mkb/suite"});
        QCOMPARE(catalog.issues.size(), std::size_t(1));
        QVERIFY(contains(catalog.issues[0].message, "does not exist"));
    }

    void unterminatedStringIsAnIssue() {
        FixtureSuite suite;
        auto path = suite.write("attention/01_a.py", "\"\"\"Title.\n\ndef reference(): pass\n");
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QVERIFY2(contains(issueFor(catalog, path), "line 1: unterminated string"), issueFor(catalog, path).c_str());
    }

    void metaIsRead() {
        FixtureSuite suite;
        suite.write("quantization/01_a.py",
                    problemText("Q.", "MKB_META = {\n    # structure\n    'tags': ['quantize', \"gemm_epilogue\",],\n"
                                      "    'quant': {'min_cosine': 0.99, 'max_rmse': 1e-2},\n"
                                      "    'outliers': {'inputs': (0, 2), 'p': 0.001, 'scale': 50},\n"
                                      "    'flops': 2_000_000, 'bytes': 4.5e6,\n}\n"));
        suite.write("quantization/02_b.py", problemText("Q.", "MKB_META = {'quant': True, 'outliers': False}\n"));
        suite.write("quantization/03_c.py",
                    problemText("Q.", "MKB_META: dict = {'outliers': 'off', 'tags': [], 'insensitive': [1, 3]}\n"));
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QVERIFY(catalog.issues.empty());
        const mkb::ProblemMeta& a = catalog.problems[0].meta;
        QCOMPARE(a.tags, (std::vector<std::string>{"quantize", "gemm_epilogue"}));
        QVERIFY(a.quant.has_value());
        QCOMPARE(a.quant->minCosine, 0.99);
        QCOMPARE(a.quant->maxRmse, 0.01);
        QCOMPARE(a.quant->maxRelativeL1, mkb::QuantThresholds{}.maxRelativeL1);
        QCOMPARE(nlohmann::json::parse(a.outliersJson),
                 nlohmann::json::parse(R"({"inputs":[0,2],"p":0.001,"scale":50})"));
        QCOMPARE(*a.flops, 2e6);
        QCOMPARE(*a.bytes, 4.5e6);
        const mkb::ProblemMeta& b = catalog.problems[1].meta;
        QVERIFY(b.quant.has_value());
        QCOMPARE(b.quant->minCosine, 0.95);
        QCOMPARE(b.outliersJson, std::string("false"));
        QVERIFY(!b.flops);
        QCOMPARE(catalog.problems[2].meta.outliersJson, std::string("\"off\""));
        QCOMPARE(catalog.problems[2].meta.insensitiveInputs, (std::vector<int>{1, 3}));
        QVERIFY(a.insensitiveInputs.empty());
    }

    void aKernelBenchXCategoryIsReadAndAnAbsentOneIsUncategorised() {
        FixtureSuite suite;
        suite.write("attention/01_a.py", problemText("A.", "MKB_META = {'category': 'Fusion', 'tags': ['gqa']}\n"));
        suite.write("attention/02_b.py", problemText("B.", "MKB_META = {'tags': ['gqa']}\n"));
        suite.write("attention/03_c.py", problemText("C."));
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QVERIFY(catalog.issues.empty());
        QCOMPARE(catalog.problems[0].meta.category, std::string("Fusion"));
        QCOMPARE(catalog.problems[1].meta.category, std::string());
        QCOMPARE(mkb::categoryOrUncategorised(catalog.problems[1].meta.category), std::string("uncategorised"));
        QCOMPARE(mkb::categoryOrUncategorised(catalog.problems[2].meta.category), std::string("uncategorised"));
        QCOMPARE(mkb::kernelBenchXCategories().size(), std::size_t(15));
    }

    void anUnknownCategoryIsAnIssueNamingTheFileAndTheAllowedValues() {
        FixtureSuite suite;
        auto lower = suite.write("attention/01_a.py", problemText("A.", "MKB_META = {'category': 'fusion'}\n"));
        auto number = suite.write("attention/02_b.py", problemText("B.", "MKB_META = {'category': 3}\n"));
        suite.write("attention/03_c.py", problemText("C.", "MKB_META = {'category': 'SpatialOps'}\n"));
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QCOMPARE(catalog.issues.size(), std::size_t(2));
        const std::string message = issueFor(catalog, lower);
        QVERIFY2(contains(message, "'category' 'fusion' is not a KernelBench-X category"), message.c_str());
        QVERIFY2(contains(message, "Activation, Convolution, Fusion, Index") && contains(message, "SpatialOps"),
                 message.c_str());
        QVERIFY2(contains(issueFor(catalog, number), "'category' 3 is not a KernelBench-X category"),
                 issueFor(catalog, number).c_str());
    }

    void hostileMetaIsRefusedWithTheLine_data() {
        QTest::addColumn<QString>("meta");
        QTest::addColumn<QString>("expected");
        QTest::newRow("__import__") << "MKB_META = {\n  'tags': __import__('os').system('rm -rf /'),\n}\n"
                                    << "line 10: call of '__import__(...)'";
        QTest::newRow("call") << "MKB_META = dict(tags=['x'])\n"
                              << "call of 'dict(...)'";
        QTest::newRow("name") << "MKB_META = {'flops': FLOPS}\n"
                              << "name 'FLOPS' is not a literal";
        QTest::newRow("attribute") << "MKB_META = {'flops': torch.pi}\n"
                                   << "refers to code";
        QTest::newRow("arithmetic") << "MKB_META = {'flops': 2 * 1024}\n"
                                    << "operator '*'";
        QTest::newRow("comprehension") << "MKB_META = {'tags': [t for t in 'ab']}\n"
                                       << "line 9:";
        QTest::newRow("lambda") << "MKB_META = {'tags': lambda: 1}\n"
                                << "name 'lambda'";
        QTest::newRow("f-string") << "MKB_META = {'tags': [f'{x}']}\n"
                                  << "f-strings are code";
        QTest::newRow("set") << "MKB_META = {'tags': {'a', 'b'}}\n"
                             << "sets are not supported";
        QTest::newRow("unknown key") << "MKB_META = {'tagz': ['a']}\n"
                                     << "unknown key 'tagz'";
        QTest::newRow("bad tags") << "MKB_META = {'tags': 'reduction'}\n"
                                  << "'tags' must be a list of strings";
        QTest::newRow("bad quant") << "MKB_META = {'quant': {'min_cos': 0.9}}\n"
                                   << "unknown key 'quant.min_cos'";
        QTest::newRow("bad outliers") << "MKB_META = {'outliers': {'p': 2}}\n"
                                      << "'outliers.p'";
        QTest::newRow("bad insensitive") << "MKB_META = {'insensitive': [-1]}\n"
                                         << "'insensitive' must be a list of input positions";
        QTest::newRow("not a dict") << "MKB_META = ['tags']\n"
                                    << "must be a dict";
        QTest::newRow("changed later") << "MKB_META = {}\nMKB_META['tags'] = ['x']\n"
                                       << "line 10: MKB_META is used";
        QTest::newRow("assigned twice") << "MKB_META = {}\nMKB_META = {}\n"
                                        << "second time";
        QTest::newRow("walrus-free tail") << "MKB_META = {}; import os\n"
                                          << "operator ';'";
    }
    void hostileMetaIsRefusedWithTheLine() {
        QFETCH(QString, meta);
        QFETCH(QString, expected);
        FixtureSuite suite;
        // problemText puts `extra` on line 5, after the docstring, a blank line, the import and a blank line;
        // four filler lines move MKB_META to line 9.
        auto path =
            suite.write("attention/01_a.py", problemText("T.", "a = 1\nb = 2\nc = 3\nd = 4\n" + meta.toStdString()));
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        std::string message = issueFor(catalog, path);
        QVERIFY2(contains(message, "MKB_META") && contains(message, expected.toStdString()), message.c_str());
        QVERIFY(catalog.problems.empty());
    }

    void literalParserHandlesPythonSyntax() {
        auto value = mkb::parsePythonLiteralText(
            "{'a': (1,), 'b': (2), 'c': [None, True, False, -3, +4.5, 0x1F, 1_000], 'd': 'x' \"y\",\n"
            " 'e': r'\\n', 'f': '\\n\\u00e9', 'g': (),  # comment\n}");
        QVERIFY2(value.ok(), value.ok() ? "" : value.error().message.c_str());
        QCOMPARE(*value, nlohmann::json::parse(R"({"a":[1],"b":2,"c":[null,true,false,-3,4.5,31,1000],"d":"xy",
                                                   "e":"\\n","f":"\n\u00e9","g":[]})"));
        QVERIFY(!mkb::parsePythonLiteralText("{1: 'x'}").ok());
        QVERIFY(!mkb::parsePythonLiteralText("{'a': 1, 'a': 2}").ok());
        QVERIFY(!mkb::parsePythonLiteralText("[1, 2").ok());
        QVERIFY(!mkb::parsePythonLiteralText("1j").ok());
        QVERIFY(!mkb::parsePythonLiteralText("007").ok());
        QVERIFY(!mkb::parsePythonLiteralText(std::string(100, '[') + std::string(100, ']')).ok());
    }

    void fingerprintIsTheSha256OfTheBytesAndFollowsEdits() {
        FixtureSuite suite;
        auto path =
            suite.write("attention/01_a.py", "\"\"\"T.\"\"\"\ndef make_inputs(): pass\ndef reference(): pass\n");
        std::string first = mkb::loadCatalog({suite.root()}).problems.at(0).fingerprint;
        QCOMPARE(first, mkb::loadCatalog({suite.root()}).problems.at(0).fingerprint); // stable across loads
        QCOMPARE(first.size(), std::size_t(64));
        suite.write("attention/01_a.py", "\"\"\"T.\"\"\"\ndef make_inputs(): pass\ndef reference(): pass\n\n");
        QVERIFY(first != mkb::loadCatalog({suite.root()}).problems.at(0).fingerprint);
        QCOMPARE(mkb::loadCatalog({suite.root()}).problems.at(0).source.back(), '\n');
        (void)path;
    }

    void findAcceptsEveryDocumentedForm() {
        FixtureSuite suite;
        auto path = suite.write("attention/07_paged_decode.py", problemText());
        suite.write("moe/12_router.py", problemText());
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        for (const char* name :
             {"7", "07", "p07", "P07", "07_paged_decode", "attention/07_paged_decode", "attention/07_paged_decode.py",
              "paged_decode", "suite/attention/07_paged_decode.py"}) {
            const mkb::Problem* found = catalog.find(name);
            QVERIFY2(found && found->number == 7, name);
        }
        QVERIFY(catalog.find(path.string()) && catalog.find(path.string())->number == 7);
        QVERIFY(!catalog.find("8"));
        QVERIFY(!catalog.find("moe/07_paged_decode"));
        QVERIFY(!catalog.find(""));
        QVERIFY(!catalog.find("unknown"));
        QCOMPARE(catalog.findByNumber(12)->slug, std::string("router"));
    }

    void selectMatchesNameCodeAndFamily() {
        FixtureSuite suite;
        suite.write("attention/01_a.py", problemText());
        suite.write("attention/02_b.py", problemText());
        suite.write("moe/13_c.py", problemText());
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QCOMPARE(catalog.select("*").size(), std::size_t(3));
        QCOMPARE(catalog.select("attention").size(), std::size_t(2));
        QCOMPARE(catalog.select("attention/*").size(), std::size_t(2));
        QCOMPARE(catalog.select("p0*").size(), std::size_t(2));
        QCOMPARE(catalog.select("p13").at(0)->slug, std::string("c"));
        QCOMPARE(catalog.select("*_b").size(), std::size_t(1));
        QVERIFY(catalog.select("kv_cache").empty());
    }

    void solutionStatusComesFromSolutionFiles() {
        FixtureSuite suite;
        suite.write("attention/01_a.py", problemText());
        suite.write("attention/_solutions/01_a.triton.py", "x");
        suite.write("attention/_solutions/01_a.cuda.py", "x");
        suite.write("attention/_solutions/01_ab.triton.py", "x"); // another problem's
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QCOMPARE(mkb::solutionDsls(catalog.problems.at(0)), (std::vector<std::string>{"cuda", "triton"}));
        QCOMPARE(mkb::solutionPath(catalog.problems.at(0), "tirx").filename().string(), std::string("01_a.tirx.py"));
    }

    void aFamilyLinkedUnderTwoNamesIsReadOnceNotAsDuplicates() {
        FixtureSuite suite;
        suite.write("moe/03_b.py", problemText());
        std::filesystem::create_directory_symlink("moe", suite.root() / "moe_again");
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QCOMPARE(catalog.problems.size(), std::size_t(1));
        QVERIFY(contains(issueFor(catalog, suite.root() / "moe_again"), "the same folder as"));
        QVERIFY(contains(issueFor(catalog, suite.root() / "moe_again"), "already walked"));
        QCOMPARE(catalog.issues.size(), std::size_t(1));
    }

    void issuesForFindsTheMalformedFileByEveryForm() {
        FixtureSuite suite;
        suite.write("attention/01_good.py", problemText());
        auto broken = suite.write("attention/07_paged_decode.py", "\"\"\"T.\"\"\"\n");
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        for (const std::string& name : {std::string("7"), std::string("p07"), std::string("07_paged_decode"),
                                        std::string("attention/07_paged_decode.py"), std::string("paged_decode"),
                                        std::string("suite/attention/07_paged_decode"), broken.string()}) {
            std::vector<const mkb::CatalogIssue*> found = catalog.issuesFor(name);
            QVERIFY2(found.size() == 2, name.c_str()); // no reference(), no make_inputs()
            QCOMPARE(found[0]->path, broken);
        }
        QVERIFY(catalog.issuesFor("1").empty());
        QVERIFY(catalog.issuesFor("8").empty());
        QVERIFY(catalog.issuesFor("moe/07_paged_decode").empty());
        QVERIFY(catalog.issuesFor("").empty());
    }

    void issueMessagesAreOneLineWhateverTheFileHolds() {
        FixtureSuite suite;
        suite.write("attention/01_a.py", problemText("T.", "MKB_META = {'tags': ['a'], 'bad\\nkey\\x1b': 1}\n"));
        suite.write("attention/02_\tx.py", problemText());
        mkb::Catalog catalog = mkb::loadCatalog({suite.root()});
        QCOMPARE(catalog.issues.size(), std::size_t(2));
        for (const mkb::CatalogIssue& issue : catalog.issues) {
            for (char c : issue.message) {
                QVERIFY2(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f, issue.message.c_str());
            }
        }
        QVERIFY(contains(issueFor(catalog, suite.root() / "attention/02_\tx.py"), "bad file name '02_\\tx.py'"));
        QVERIFY(contains(issueFor(catalog, suite.root() / "attention/01_a.py"), "unknown key 'bad\\nkey\\x1b'"));
    }

    void shippedProblemsAreValid() {
        mkb::Catalog catalog = mkb::loadCatalog({mkbtest::sourceDir() / "problems"});
        for (const auto& issue : catalog.issues) {
            qWarning("%s: %s", issue.path.c_str(), issue.message.c_str());
        }
        QVERIFY(catalog.issues.empty());
        QVERIFY(catalog.problems.size() >= 6);
        std::set<std::string> families;
        for (const mkb::Problem& problem : catalog.problems) {
            families.insert(problem.family);
            QVERIFY2(!problem.meta.tags.empty(), problem.name().c_str());
            QVERIFY2(!problem.meta.category.empty(), (problem.name() + " names no KernelBench-X category").c_str());
        }
        QCOMPARE(families, (std::set<std::string>{"attention", "kv_cache", "linear_attention", "mlp_norm", "moe",
                                                  "quantization"}));
    }
};

QTEST_GUILESS_MAIN(CatalogTest)
#include "tst_catalog.moc"
