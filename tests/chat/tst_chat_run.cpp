// `mkb run --driver chat` end to end on CPU problems against the scripted server, with a planted API key that must
// reach the server and nowhere else: not the store file, the attempt folders, stdout or stderr.
#include "chat_fixtures.h"

#include <QProcess>
#include <QtTest>

#include <filesystem>
#include <fstream>

using chattest::FakeServer;
using chattest::kernelBlock;
using chattest::say;
using chattest::skillBlock;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char* kKeyVariable = "MKB_TEST_CHAT_RUN_KEY";
const char* kPlantedKey = "sk-run-planted-9f8e7d6c5b4a39281706";

struct CliRun {
    int exitCode = -1;
    std::string out;
    std::string err;
};

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

/// Every byte under a folder (or of a file), concatenated: where a leaked key would be found.
std::string allBytesUnder(const fs::path& root) {
    std::string bytes;
    std::error_code ec;
    if (fs::is_regular_file(root, ec)) {
        return chattest::readAll(root);
    }
    for (const auto& entry : fs::recursive_directory_iterator(root, ec)) {
        if (entry.is_regular_file()) {
            bytes += chattest::readAll(entry.path());
        }
    }
    return bytes;
}

} // namespace

class ChatRunTest : public QObject {
    Q_OBJECT

    QTemporaryDir temp_;

    fs::path dir() const { return temp_.path().toStdString(); }

    /// Two CPU DSLs (copies of the cpusim fixture under other ids) so a transfer pair runs without a GPU.
    fs::path writeDslPair() const {
        const fs::path dsls = dir() / "dsls";
        fs::create_directories(dsls);
        json descriptor = json::parse(chattest::readAll(mkbtest::sourceDir() / "tests/fixtures/dsls/cpusim.json"));
        for (const char* id : {"cpua", "cpub"}) {
            descriptor["id"] = id;
            std::ofstream(dsls / (std::string(id) + ".json")) << descriptor.dump(2);
        }
        return dsls;
    }

    CliRun runMkb(const QStringList& args) const {
        QProcess process;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("MKB_PYTHON", QString::fromStdString(mkbtest::testPython()));
        env.insert(kKeyVariable, kPlantedKey);
        process.setProcessEnvironment(env);
        process.start(QString::fromStdString(mkbtest::cliPath()), args);
        process.waitForFinished(600000);
        return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
                process.readAllStandardOutput().toStdString(), process.readAllStandardError().toStdString()};
    }

private slots:
    void chatRunConvergesAndNeverLeaksTheKey() {
        QVERIFY(temp_.isValid());
        const std::string kernel =
            chattest::readAll(mkbtest::sourceDir() / "tests/fixtures/solutions/01_vector_add.cpusim.py");
        QVERIFY(!kernel.empty());
        // The first request is refused with the Authorization header echoed into the error body: that trial ends
        // with an infrastructure error whose text must come out redacted. Every later request gets a good kernel.
        FakeServer server;
        std::string why;
        QVERIFY2(server.start({{"replies",
                                {{{"status", 401}, {"echo_auth", true}, {"body", "key refused"}},
                                 say("Plan: one cpusim kernel.\n\n" + kernelBlock(kernel) +
                                         skillBlock("- a single fused pass reads each input once"),
                                     {{"prompt_tokens", 1000}, {"completion_tokens", 100}})}},
                               {"repeat_last", true}},
                              &why),
                 why.c_str());
        const fs::path config = dir() / "chat.json";
        std::ofstream(config) << json{{"base_url", server.baseUrl()},
                                      {"model", "fake-model"},
                                      {"api_key_env", kKeyVariable},
                                      {"request_timeout_s", 60},
                                      {"backoff_initial_s", 0.05},
                                      {"price", {{"input_per_mtok", 1.0}, {"output_per_mtok", 2.0}}}}
                                     .dump();
        const fs::path store = dir() / "store.sqlite";
        const fs::path workspaces = dir() / "attempts";
        const QStringList args = {"run",
                                  "--model",
                                  "fake-model",
                                  "--driver",
                                  "chat",
                                  "--driver-config",
                                  QString::fromStdString(config.string()),
                                  "--problems",
                                  "p01",
                                  "--dsls",
                                  "cpua,cpub",
                                  "--suite",
                                  QString::fromStdString((mkbtest::sourceDir() / "tests/fixtures/problems").string()),
                                  "--dsl-dir",
                                  QString::fromStdString(writeDslPair().string()),
                                  "--device",
                                  "cpu",
                                  "--store",
                                  QString::fromStdString(store.string()),
                                  "--workspaces",
                                  QString::fromStdString(workspaces.string()),
                                  "--submissions",
                                  "2",
                                  "--wall-clock",
                                  "300",
                                  "--timing-draws",
                                  "3",
                                  "--concurrency",
                                  "1"};
        const CliRun first = runMkb(args);
        QVERIFY2(first.exitCode == 5, (first.out + first.err).c_str()); // one trial broke on the 401
        const std::string afterFirst = allBytesUnder(store) + allBytesUnder(workspaces) + first.out + first.err;
        QVERIFY2(contains(afterFirst, "[REDACTED]"), "the echoed key never reached any output, so nothing was tested");
        QVERIFY2(!contains(afterFirst, kPlantedKey), "the planted key leaked after the first run");

        const CliRun second = runMkb(args); // convergent: reruns the broken trial
        QVERIFY2(second.exitCode == 0, (second.out + second.err).c_str());
        QVERIFY(server.requests().at(0)["has_authorization"].get<bool>());
        const std::string everything = allBytesUnder(store) + allBytesUnder(workspaces) + first.out + first.err +
                                       second.out + second.err + allBytesUnder(config);
        QVERIFY2(!contains(everything, kPlantedKey), "the planted key leaked");
        // The chat driver really ran: its logs are in the attempt folders.
        QVERIFY(contains(allBytesUnder(workspaces), "attempt starts: solo_cpua"));
        QVERIFY(contains(allBytesUnder(workspaces), "submission 2 counted"));
    }
};

QTEST_GUILESS_MAIN(ChatRunTest)
#include "tst_chat_run.moc"
