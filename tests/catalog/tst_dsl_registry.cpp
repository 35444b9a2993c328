// Tests of the DSL registry: the six shipped descriptors, and errors that name the file and the field.
#include "support/testpaths.h"

#include "core/catalog/dsl_registry.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <regex>

namespace {

nlohmann::json goodDescriptor(const std::string& id) {
    return nlohmann::json::parse(R"({
      "id": ")" + id + R"(", "display_name": "Test DSL", "import_name": "testdsl", "packages": ["testdsl"],
      "install_hint": "pip install testdsl", "prompt": "Write kernels in the test DSL; define solve(*inputs).", "doc_pack": [],
      "compliance": {"adapter": "triton", "kernel_markers": ["@testdsl\\.kernel"],
                     "forbidden_imports": ["cupy"], "forbidden_patterns": ["torch\\.compile"]}})");
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

class DslRegistryTest : public QObject {
    Q_OBJECT
private slots:
    void sixDslsShipAndValidate() {
        auto registry = mkb::loadDslRegistry({mkbtest::sourceDir() / "resources" / "dsls"});
        QVERIFY2(registry.ok(), registry.ok() ? "" : registry.error().message.c_str());
        QCOMPARE(registry->ids(), (std::vector<std::string>{"cuda", "cutedsl", "numba", "pallas", "tirx", "triton"}));
        const mkb::DslDescriptor* cute = registry->find("cutedsl");
        QCOMPARE(cute->importName, std::string("cutlass"));
        QCOMPARE(cute->packages, std::vector<std::string>{"nvidia-cutlass-dsl"});
        QCOMPARE(registry->find("tirx")->importName, std::string("tvm"));
        QCOMPARE(registry->find("numba")->importName, std::string("numba"));
        QCOMPARE(registry->find("pallas")->importName, std::string("jax"));
        QVERIFY(contains(registry->find("numba")->prompt, "__cuda_array_interface__"));
        QVERIFY(contains(registry->find("pallas")->prompt, "from_dlpack"));
        const mkb::DslDescriptor* cuda = registry->find("cuda");
        QVERIFY(contains(cuda->prompt, "mkb_cuda.compile"));
        QVERIFY(contains(cuda->prompt, "NVRTC"));
        for (const mkb::DslDescriptor& dsl : registry->dsls) {
            QVERIFY(!dsl.docPack.empty());
            for (const auto& doc : dsl.docPackPaths()) {
                QVERIFY2(std::filesystem::is_regular_file(doc), doc.c_str());
            }
            QCOMPARE(dsl.compliance.adapter, dsl.id);
            // Every DSL forbids the other kernel languages but not its own.
            const auto& forbidden = dsl.compliance.forbiddenImports;
            for (const char* other : {"triton", "cupy", "numba", "jax", "cutlass", "tvm", "tilelang", "pycuda",
                                      "ctypes", "subprocess", "torch.utils.cpp_extension"}) {
                bool own = dsl.importName == other;
                QCOMPARE(std::find(forbidden.begin(), forbidden.end(), other) != forbidden.end(), !own);
            }
            std::string patterns;
            for (const auto& pattern : dsl.compliance.forbiddenPatterns) {
                patterns += pattern + " ";
            }
            for (const char* sample :
                 {"torch.compile(f)", "torch.jit.script(f)", "g = torch.cuda.CUDAGraph()", "import ctypes"}) {
                bool caught = false;
                for (const auto& pattern : dsl.compliance.forbiddenPatterns) {
                    caught = caught || std::regex_search(sample, std::regex(pattern));
                }
                QVERIFY2(caught, (dsl.id + " misses " + sample).c_str());
            }
        }
    }

    void markersRecogniseTheirOwnKernels() {
        auto registry = mkb::loadDslRegistry({mkbtest::sourceDir() / "resources" / "dsls"});
        QVERIFY(registry.ok());
        const std::map<std::string, std::string> samples = {
            {"triton", "@triton.jit\ndef k(x_ptr):\n    pass\n"},
            {"cuda", "SRC = r'''extern \"C\" __global__ void k() {}'''\nk = mkb_cuda.compile(SRC, 'k')\n"},
            {"cutedsl", "@cute.kernel\ndef k(a):\n    pass\n"},
            {"tirx", "@T.prim_func\ndef k(a: T.handle):\n    pass\n"},
            {"numba", "from numba import cuda\n@cuda.jit\ndef k(x):\n    pass\n"},
            {"pallas", "from jax.experimental import pallas as pl\nf = pl.pallas_call(k, out_shape=s)\n"}};
        for (const auto& [id, source] : samples) {
            for (const auto& [otherId, otherDsl] : std::map<std::string, int>{
                     {"triton", 0}, {"cuda", 0}, {"cutedsl", 0}, {"tirx", 0}, {"numba", 0}, {"pallas", 0}}) {
                (void)otherDsl;
                bool matched = false;
                for (const auto& marker : registry->find(id)->compliance.kernelMarkers) {
                    matched = matched || std::regex_search(samples.at(otherId), std::regex(marker));
                }
                QVERIFY2(matched == (otherId == id), (id + " marker vs " + otherId + " sample").c_str());
            }
        }
    }

    void extraDescriptorFolderAddsTestDsls() {
        QTemporaryDir dir;
        std::filesystem::path folder = std::filesystem::path(dir.path().toStdString()) / "dsls";
        std::filesystem::create_directories(folder);
        std::ofstream(folder / "fake.json") << goodDescriptor("fake").dump();
        auto registry = mkb::loadDslRegistry({mkbtest::sourceDir() / "resources" / "dsls", folder});
        QVERIFY2(registry.ok(), registry.ok() ? "" : registry.error().message.c_str());
        QCOMPARE(registry->dsls.size(), std::size_t(7));
        QVERIFY(registry->find("fake"));
        std::ofstream(folder / "triton.json") << goodDescriptor("triton").dump();
        auto clash = mkb::loadDslRegistry({mkbtest::sourceDir() / "resources" / "dsls", folder});
        QVERIFY(!clash.ok());
        QVERIFY(contains(clash.error().message, "field 'id'"));
        QVERIFY(contains(clash.error().message, "already defined"));
    }

    void badDescriptorErrorsNameFileAndField_data() {
        QTest::addColumn<QString>("pointer");
        QTest::addColumn<QString>("replacement");
        QTest::addColumn<QString>("field");
        QTest::newRow("missing id") << "/id"
                                    << "<remove>"
                                    << "field 'id': missing";
        QTest::newRow("id not file name") << "/id"
                                          << "\"other\""
                                          << "field 'id'";
        QTest::newRow("display name type") << "/display_name"
                                           << "3"
                                           << "field 'display_name': must be a string";
        QTest::newRow("empty prompt") << "/prompt"
                                      << "\" \""
                                      << "field 'prompt': must not be empty";
        QTest::newRow("prompt without the entry point") << "/prompt"
                                                        << "\"Write kernels; define run(*inputs).\""
                                                        << "field 'prompt': must tell candidates to define";
        QTest::newRow("import name") << "/import_name"
                                     << "\"not a module\""
                                     << "field 'import_name'";
        QTest::newRow("packages type") << "/packages"
                                       << "\"testdsl\""
                                       << "field 'packages'";
        QTest::newRow("doc pack missing file") << "/doc_pack"
                                               << "[\"guide.md\"]"
                                               << "field 'doc_pack[0]'";
        QTest::newRow("doc pack escapes") << "/doc_pack"
                                          << "[\"../x.md\"]"
                                          << "field 'doc_pack[0]'";
        QTest::newRow("unknown field") << "/colour"
                                       << "\"red\""
                                       << "field 'colour': unknown";
        QTest::newRow("no compliance") << "/compliance"
                                       << "<remove>"
                                       << "field 'compliance': missing";
        QTest::newRow("adapter") << "/compliance/adapter"
                                 << "\"opencl\""
                                 << "field 'compliance.adapter'";
        QTest::newRow("no markers") << "/compliance/kernel_markers"
                                    << "[]"
                                    << "field 'compliance.kernel_markers'";
        QTest::newRow("bad regex") << "/compliance/kernel_markers"
                                   << "[\"ok\", \"(unclosed\"]"
                                   << "field 'compliance.kernel_markers[1]': not a valid regular expression";
        QTest::newRow("bad pattern") << "/compliance/forbidden_patterns"
                                     << "[\"[z-a]\"]"
                                     << "field 'compliance.forbidden_patterns[0]'";
        QTest::newRow("forbids itself") << "/compliance/forbidden_imports"
                                        << "[\"testdsl\"]"
                                        << "field 'compliance.forbidden_imports[0]'";
        QTest::newRow("unknown rule") << "/compliance/extra"
                                      << "1"
                                      << "field 'compliance.extra'";
    }
    void badDescriptorErrorsNameFileAndField() {
        QFETCH(QString, pointer);
        QFETCH(QString, replacement);
        QFETCH(QString, field);
        nlohmann::json descriptor = goodDescriptor("fake");
        nlohmann::json::json_pointer at(pointer.toStdString());
        if (replacement == "<remove>") {
            descriptor[at.parent_pointer()].erase(at.back());
        } else {
            descriptor[at] = nlohmann::json::parse(replacement.toStdString());
        }
        QTemporaryDir dir;
        std::filesystem::path file = std::filesystem::path(dir.path().toStdString()) / "dsls" / "fake.json";
        auto result = mkb::parseDslDescriptor(descriptor.dump(), file);
        QVERIFY(!result.ok());
        const std::string& message = result.error().message;
        QVERIFY2(contains(message, file.string()) && contains(message, field.toStdString()), message.c_str());
        QVERIFY(message.find('\n') == std::string::npos);
        QVERIFY(mkb::parseDslDescriptor(goodDescriptor("fake").dump(), file).ok()); // the fixture itself is good
    }

    void brokenJsonNamesTheFile() {
        auto result = mkb::parseDslDescriptor("{\"id\": ", "/somewhere/dsls/x.json");
        QVERIFY(!result.ok());
        QVERIFY(contains(result.error().message, "/somewhere/dsls/x.json: not valid JSON"));
    }

    void missingFolderIsAnError() {
        auto result = mkb::loadDslRegistry({"/nonexistent/dsls"});
        QVERIFY(!result.ok());
        QVERIFY(contains(result.error().message, "/nonexistent/dsls"));
    }
};

QTEST_GUILESS_MAIN(DslRegistryTest)
#include "tst_dsl_registry.moc"
