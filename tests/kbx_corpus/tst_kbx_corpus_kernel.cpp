// Tests of corpusRoundKernel: a KernelBench-X corpus round and its problem file become a kernel.py with solve().
#include "core/io/kbx_corpus_kernel.h"
#include "kbx_corpus/kernel_sources.h"
#include "support/testpaths.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <sstream>

namespace {

std::vector<std::string> linesOf(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
    }
    return lines;
}

/// Python's own compile of the text (nothing run): "" when it compiles, else its error.
std::string pythonCompileError(const std::string& source) {
    QTemporaryDir dir;
    const std::string path = dir.filePath("kernel.py").toStdString();
    std::ofstream(path) << source;
    QProcess process;
    process.start(QString::fromStdString(mkbtest::testPython()),
                  {"-I", "-S", "-c", "import sys; compile(open(sys.argv[1]).read(), sys.argv[1], 'exec')",
                   QString::fromStdString(path)});
    process.waitForFinished(60000);
    return process.exitCode() == 0 ? "" : process.readAllStandardError().toStdString();
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

class TestKbxCorpusKernel : public QObject {
    Q_OBJECT

private slots:
    void theHarnessBelowTheSeparatorIsLeftOutAndSolveMakesTheReferencesCall() {
        auto kernel = mkb::corpusRoundKernel(kbxtest::kRoundWithHarness, kbxtest::kProblemSource, "task A/b round_1");
        QVERIFY2(kernel, kernel ? "" : kernel.error().message.c_str());
        QCOMPARE(kernel->call, std::string("gelu_bf16(x, approximate='none')"));
        QVERIFY(kernel->source.ends_with("def solve(x):\n    return gelu_bf16(x, approximate='none')\n"));
        QVERIFY(contains(kernel->source, "_gelu_kernel[(triton.cdiv(input.numel(), 1024),)]"));
        QVERIFY(!contains(kernel->source, "data_utils"));
        QVERIFY(!contains(kernel->source, "test_results"));
        QVERIFY(!contains(kernel->source, "def reference"));
        QCOMPARE(kernel->dropped.size(), std::size_t{1});
        QVERIFY2(kernel->dropped[0].starts_with("lines 16-27: KernelBench-X's test harness"),
                 kernel->dropped[0].c_str());
        const std::vector<std::string> code = linesOf(kbxtest::kRoundWithHarness);
        const std::vector<std::string> adapted = linesOf(kernel->source);
        for (std::size_t i = 0; i < 15; ++i) {
            QCOMPARE(adapted[i], code[i]); // the kernel's lines keep their numbers
        }
        QCOMPARE(pythonCompileError(kernel->source), std::string());
    }

    void anImportTimeTestCallIsCommentedOutAndAMainBlockAndADocstringRowAreKept() {
        auto kernel = mkb::corpusRoundKernel(kbxtest::kRoundWithInlineTestCall, kbxtest::kProblemSource, "t");
        QVERIFY2(kernel, kernel ? "" : kernel.error().message.c_str());
        const std::vector<std::string> adapted = linesOf(kernel->source);
        QCOMPARE(adapted[14], std::string("# results = test_gelu_bf16("));
        QCOMPARE(adapted[15], std::string("#     )"));
        QCOMPARE(adapted[16], std::string("if __name__ == \"__main__\":"));
        QCOMPARE(adapted[17], std::string("    test_gelu_bf16()"));
        QVERIFY(contains(kernel->source, "    \"\"\"Doc.\n####"));
        QCOMPARE(kernel->dropped.size(), std::size_t{1});
        QVERIFY2(kernel->dropped[0] == "lines 15-16: `results = test_gelu_bf16(` commented out (it calls "
                                       "KernelBench-X's test harness at import)",
                 kernel->dropped[0].c_str());
        QCOMPARE(pythonCompileError(kernel->source), std::string());
    }

    void aRoundWhoseCodeIsNotPythonIsStillAdaptedAndFailsToCompile() {
        const std::string collapsed = "import torch\nimport triton.language as tl @triton.jit\ndef gelu_bf16(x): "
                                      "return x\n" +
                                      std::string(120, '#') + " import sys\ntest_results = test_gelu_bf16()\n";
        auto kernel = mkb::corpusRoundKernel(collapsed, kbxtest::kProblemSource, "t");
        QVERIFY(kernel);
        QVERIFY(!contains(kernel->source, "import sys"));
        QVERIFY(contains(kernel->source, "def solve(x):"));
        QVERIFY(!pythonCompileError(kernel->source).empty());
    }

    void aRoundWithoutCodeIsOneErrorNamingTheTaskAndRound() {
        for (const std::string code : {"", "  \n\t\n"}) {
            auto kernel = mkb::corpusRoundKernel(code, kbxtest::kProblemSource, "task Activation/gelu_bf16 round_2");
            QVERIFY(!kernel);
            QCOMPARE(kernel.error().message, std::string("task Activation/gelu_bf16 round_2: the round holds no code "
                                                         "(the corpus stored none for it), so there is no kernel to "
                                                         "grade"));
        }
    }

    void aProblemWithoutAOneCallReferenceIsOneErrorNamingTheTaskAndRound() {
        auto none = mkb::corpusRoundKernel(kbxtest::kRoundWithHarness,
                                           "import torch\n\ndef make_inputs():\n    "
                                           "return []\n",
                                           "task Math/exp round_0");
        QVERIFY(!none);
        QVERIFY2(none.error().message.starts_with("task Math/exp round_0: its problem file defines no module-level "
                                                  "reference()"),
                 none.error().message.c_str());
        auto twoLines = mkb::corpusRoundKernel(kbxtest::kRoundWithHarness, kbxtest::kProblemWithTwoLineReference,
                                               "task X/y round_1");
        QVERIFY(!twoLines);
        QVERIFY2(twoLines.error().message == "task X/y round_1: the reference() of its problem file (line 8) is not "
                                             "one `return task(...)` line, so solve() cannot make the same call",
                 twoLines.error().message.c_str());
        auto broken = mkb::corpusRoundKernel(kbxtest::kRoundWithHarness, "def reference(x):\n    return f('x)\n", "r");
        QVERIFY(!broken);
        QVERIFY2(broken.error().message.starts_with("r: its problem file cannot be read as Python: line 2:"),
                 broken.error().message.c_str());
    }

    void aRoundDefiningItsOwnSolveIsToldItIsReplaced() {
        auto kernel = mkb::corpusRoundKernel("def gelu_bf16(x):\n    return x\n\n\ndef solve(x):\n    return x\n",
                                             kbxtest::kProblemSource, "t");
        QVERIFY(kernel);
        QCOMPARE(kernel->dropped.back(), std::string("the round's own module-level solve() is replaced by the one "
                                                     "below"));
    }

    void aTaskCalledSolveKeepsItsFunctionUnderAnAliasSoSolveDoesNotCallItself() {
        const std::string problem = "import torch\n\n\ndef solve(A, B):\n    return torch.linalg.solve(A, B)\n\n\n"
                                    "def reference(A, b):\n    return solve(A, b)\n";
        auto kernel = mkb::corpusRoundKernel("import torch\n\n\ndef solve(A, B):\n    return A\n", problem, "t");
        QVERIFY2(kernel, kernel ? "" : kernel.error().message.c_str());
        QCOMPARE(kernel->call, std::string("kbx_task_solve(A, b)"));
        QVERIFY2(kernel->source.ends_with("kbx_task_solve = solve\n\n\n# mkb: the contract's entry point makes the "
                                          "call the problem's reference() makes.\ndef solve(A, b):\n    return "
                                          "kbx_task_solve(A, b)\n"),
                 kernel->source.c_str());
        QCOMPARE(kernel->dropped, std::vector<std::string>{"the task's function solve() is kept as kbx_task_solve, "
                                                           "which the contract's solve() calls"});
        QCOMPARE(pythonCompileError(kernel->source), std::string());
    }
};

QTEST_GUILESS_MAIN(TestKbxCorpusKernel)
#include "tst_kbx_corpus_kernel.moc"
