// Full chat attempts against the scripted server: turns, malformed replies, retries, budgets, usage and secrets.
#include "chat_fixtures.h"

#include "core/agents/chat_driver.h"
#include "core/agents/secrets.h"

#include <QtTest>

#include <atomic>
#include <filesystem>
#include <thread>

using chattest::FakeGate;
using chattest::FakeServer;
using chattest::kernelBlock;
using chattest::say;
using chattest::skillBlock;
using nlohmann::json;

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

const char* kPlantedKeyVariable = "MKB_TEST_CHAT_PLANTED_KEY";
const char* kPlantedKey = "sk-planted-4b1d9c0e7f2a63581e9d";

struct Run {
    mkb::AttemptResult result;
    double seconds = 0;
    std::string workspaceText; // every file the attempt left in its workspace, concatenated
};

} // namespace

class ChatDriverTest : public QObject {
    Q_OBJECT

    QTemporaryDir scratch_;

    json settingsFor(const FakeServer& server, json overrides = json::object()) {
        json settings = {{"base_url", server.baseUrl()}, {"model", "fake-model"},
                         {"request_timeout_s", 10},      {"max_retries", 2},
                         {"backoff_initial_s", 0.05},    {"backoff_max_s", 0.2}};
        settings.update(overrides);
        return settings;
    }

    bool startServer(FakeServer& server, const json& script) {
        std::string why;
        if (!server.start(script, &why)) {
            qWarning("%s", why.c_str());
            return false;
        }
        return true;
    }

    Run runAttempt(const json& settings, FakeGate& gate, mkb::AttemptTask task, std::atomic<bool>* cancel = nullptr) {
        Run run;
        auto driver = mkb::makeChatDriver(settings);
        if (!driver) {
            run.result.error = "makeChatDriver failed: " + driver.error().message;
            run.result.infrastructureError = true;
            return run;
        }
        std::atomic<bool> neverCancel{false};
        const auto started = std::chrono::steady_clock::now();
        run.result = (*driver)->attempt(task, gate, cancel ? *cancel : neverCancel);
        run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        for (const auto& entry : std::filesystem::recursive_directory_iterator(task.workspace)) {
            if (entry.is_regular_file()) {
                run.workspaceText += chattest::readAll(entry.path());
            }
        }
        return run;
    }

    std::filesystem::path workspace(const char* name) {
        return std::filesystem::path(scratch_.path().toStdString()) / name;
    }

private slots:
    void initTestCase() {
        QVERIFY(scratch_.isValid());
        if (qEnvironmentVariableIsSet("MKB_TEST_KEEP_CHAT_WORKSPACES")) { // for reading chat.log and the transcript
            scratch_.setAutoRemove(false);
            qInfo("attempt workspaces kept in %s", qPrintable(scratch_.path()));
        }
    }

    void twoTurnAttemptSubmitsAndReportsBack() {
        FakeServer server;
        QVERIFY(startServer(
            server,
            {{"replies",
              {say("Here is my first try.\n\n" + kernelBlock("def solve(x, y):\n    pass  # v1") + "\n" +
                   skillBlock("- first notes")),
               say("`kernel.py`\n```python\ndef solve(x, y):\n    pass  # v2\n```\n\n" + skillBlock("- second notes")),
               say(skillBlock("- final notes: fusing the add saves nothing") + "\nDONE\n")}}}));
        FakeGate gate(10, 120);
        const Run run = runAttempt(settingsFor(server), gate, chattest::smallTask(workspace("two_turn")));
        QVERIFY2(run.result.error.empty(), run.result.error.c_str());
        QCOMPARE(gate.kernels.size(), std::size_t(2));
        QVERIFY(contains(gate.kernels[0], "# v1"));
        QVERIFY(contains(gate.kernels[1], "# v2"));
        QVERIFY(contains(run.result.finalKernel, "# v2"));
        QVERIFY(run.result.skill && contains(*run.result.skill, "final notes"));
        QVERIFY(!run.result.timedOut);
        QVERIFY(!run.result.infrastructureError);
        const auto requests = server.requests();
        QCOMPARE(requests.size(), std::size_t(3));
        QCOMPARE(requests[0]["body"]["model"].get<std::string>(), std::string("fake-model"));
        QCOMPARE(requests[0]["body"]["messages"][0]["role"].get<std::string>(), std::string("system"));
        QVERIFY(contains(server.lastMessage(0), "Add two vectors"));
        QVERIFY(contains(server.lastMessage(1), "REPORT-1"));
        QVERIFY(contains(server.lastMessage(1), "Submissions left: 9."));
        QVERIFY(contains(server.lastMessage(1), "Minutes left: "));
        QVERIFY(contains(server.lastMessage(2), "REPORT-2"));
        QVERIFY(contains(server.lastMessage(2), "Submissions left: 8."));
        // The conversation keeps the assistant turns.
        QCOMPARE(requests[2]["body"]["messages"].size(), std::size_t(6));
        QVERIFY(run.result.usage.agentSeconds && *run.result.usage.agentSeconds > 0);
        QVERIFY(contains(run.workspaceText, "the model said DONE"));
        // The workspace mirrors the latest files.
        QVERIFY(contains(chattest::readAll(workspace("two_turn") / "kernel.py"), "# v2"));
        QVERIFY(contains(chattest::readAll(workspace("two_turn") / "SKILL.md"), "final notes"));
    }

    void malformedReplyGetsCorrectionWithoutSubmission_data() {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("expectedWords");
        QTest::newRow("empty") << "empty"
                               << "empty";
        QTest::newRow("no code block") << "prose"
                                       << "no kernel.py block";
        QTest::newRow("unnamed code block") << "unnamed"
                                            << "none is named kernel.py";
        QTest::newRow("two kernel blocks") << "two"
                                           << "2 kernel.py blocks";
        QTest::newRow("wrong file name") << "wrongname"
                                         << "solution.py";
        QTest::newRow("huge text") << "huge"
                                   << "more than the limit";
        QTest::newRow("invalid UTF-8") << "utf8"
                                       << "not valid UTF-8";
        QTest::newRow("unterminated block") << "cut"
                                            << "never closed";
    }

    void malformedReplyGetsCorrectionWithoutSubmission() {
        QFETCH(QString, kind);
        QFETCH(QString, expectedWords);
        json bad;
        if (kind == "empty") {
            bad = say("   \n");
        } else if (kind == "prose") {
            bad = say("I think a Triton kernel with BLOCK=1024 would work well here.");
        } else if (kind == "unnamed") {
            bad = say("Here:\n\n```python\ndef solve(x, y):\n    pass\n```\n");
        } else if (kind == "two") {
            bad = say(kernelBlock("def solve(x, y):\n    pass # a") + kernelBlock("def solve(x, y):\n    pass # b"));
        } else if (kind == "wrongname") {
            bad = say("```python title=solution.py\ndef solve(x, y):\n    pass\n```\n");
        } else if (kind == "huge") {
            bad = say(kernelBlock("# " + std::string(310000, 'x')));
        } else if (kind == "utf8") {
            const std::string body =
                R"({"choices":[{"index":0,"message":{"role":"assistant","content":"```python title=kernel.py\ndef solve(x, y):\n    pass # )" +
                std::string("\xff\xfe") + R"(\n```\n"},"finish_reason":"stop"}]})";
            std::string hex;
            for (unsigned char c : body) {
                char pair[3];
                std::snprintf(pair, sizeof pair, "%02x", c);
                hex += pair;
            }
            bad = {{"raw_body_hex", hex}};
        } else if (kind == "cut") {
            bad = {{"content", "```python title=kernel.py\ndef solve(x, y):\n    return"}, {"finish_reason", "length"}};
        }
        FakeServer server;
        QVERIFY(startServer(server,
                            {{"replies", {bad, say(kernelBlock("def solve(x, y):\n    pass # good")), say("DONE")}}}));
        FakeGate gate(10, 120);
        const Run run = runAttempt(settingsFor(server), gate,
                                   chattest::smallTask(workspace(("malformed_" + kind.toStdString()).c_str())));
        QVERIFY2(run.result.error.empty(), run.result.error.c_str());
        QCOMPARE(gate.kernels.size(), std::size_t(1)); // only the good kernel was submitted
        QVERIFY(contains(gate.kernels[0], "# good"));
        QVERIFY(contains(run.result.finalKernel, "# good"));
        const std::string correction = server.lastMessage(1);
        QVERIFY2(contains(correction, "could not be used"), correction.c_str());
        QVERIFY2(contains(correction, expectedWords.toStdString()), correction.c_str());
        QVERIFY(contains(correction, "no submission was used"));
        QVERIFY(contains(correction, "Submissions left: 10."));
    }

    void consecutiveMalformedRepliesEndTheAttempt() {
        FakeServer server;
        QVERIFY(startServer(server, {{"replies", {say("no code")}}, {"repeat_last", true}}));
        FakeGate gate(10, 120);
        const Run run = runAttempt(settingsFor(server, {{"max_malformed_replies", 3}}), gate,
                                   chattest::smallTask(workspace("malformed_streak")));
        QVERIFY(contains(run.result.error, "3 unusable replies in a row"));
        QVERIFY(!run.result.infrastructureError);
        QCOMPARE(gate.kernels.size(), std::size_t(0));
        QCOMPARE(server.requests().size(), std::size_t(3));
        QVERIFY(run.result.finalKernel.empty());
    }

    void http429WithRetryAfterThenSuccess() {
        FakeServer server;
        QVERIFY(startServer(server, {{"replies",
                                      {{{"status", 429}, {"headers", {{"Retry-After", "1"}}}},
                                       say(kernelBlock("def solve(x, y):\n    pass")),
                                       say("DONE")}}}));
        FakeGate gate(10, 120);
        const Run run = runAttempt(settingsFor(server), gate, chattest::smallTask(workspace("retry_429")));
        QVERIFY2(run.result.error.empty(), run.result.error.c_str());
        QCOMPARE(gate.kernels.size(), std::size_t(1));
        QVERIFY2(run.seconds >= 0.95, "Retry-After: 1 was not honoured"); // backoff_max_s is 0.2
        QVERIFY(contains(run.workspaceText, "retry 1 of 2 after HTTP 429; waiting 1.0 s (Retry-After)"));
    }

    void http500ThenSuccess() {
        FakeServer server;
        QVERIFY(startServer(
            server,
            {{"replies",
              {{{"status", 500}}, {{"status", 502}}, say(kernelBlock("def solve(x, y):\n    pass")), say("DONE")}}}));
        FakeGate gate(10, 120);
        const Run run = runAttempt(settingsFor(server), gate, chattest::smallTask(workspace("retry_500")));
        QVERIFY2(run.result.error.empty(), run.result.error.c_str());
        QCOMPARE(gate.kernels.size(), std::size_t(1));
        QVERIFY(contains(run.workspaceText, "retry 1 of 2 after HTTP 500"));
        QVERIFY(contains(run.workspaceText, "retry 2 of 2 after HTTP 502"));
        QVERIFY(contains(run.workspaceText, "2 retries"));
    }

    void requestTimeoutThenSuccess() {
        FakeServer server;
        QVERIFY(startServer(server, {{"replies",
                                      {{{"delay_s", 3}, {"content", "too late"}},
                                       say(kernelBlock("def solve(x, y):\n    pass")),
                                       say("DONE")}}}));
        FakeGate gate(10, 120);
        const Run run = runAttempt(settingsFor(server, {{"request_timeout_s", 0.5}}), gate,
                                   chattest::smallTask(workspace("retry_timeout")));
        QVERIFY2(run.result.error.empty(), run.result.error.c_str());
        QCOMPARE(gate.kernels.size(), std::size_t(1));
        QVERIFY(contains(run.workspaceText, "after timeout"));
    }

    void connectionDropThenSuccess() {
        FakeServer server;
        QVERIFY(startServer(
            server, {{"replies", {{{"drop", true}}, say(kernelBlock("def solve(x, y):\n    pass")), say("DONE")}}}));
        FakeGate gate(10, 120);
        const Run run = runAttempt(settingsFor(server), gate, chattest::smallTask(workspace("retry_drop")));
        QVERIFY2(run.result.error.empty(), run.result.error.c_str());
        QCOMPARE(gate.kernels.size(), std::size_t(1));
        QVERIFY(contains(run.workspaceText, "after connection error"));
    }

    void retriesExhaustedIsAnInfrastructureError() {
        FakeServer server;
        QVERIFY(startServer(server, {{"replies", {{{"status", 503}}}}, {"repeat_last", true}}));
        FakeGate gate(10, 120);
        const Run run = runAttempt(settingsFor(server), gate, chattest::smallTask(workspace("retry_exhausted")));
        QVERIFY(run.result.infrastructureError);
        QVERIFY2(contains(run.result.error, "HTTP 503 after 2 retries"), run.result.error.c_str());
        QCOMPARE(server.requests().size(), std::size_t(3));
        QCOMPARE(gate.kernels.size(), std::size_t(0));
    }

    void fullContextEndsTheAttemptWithoutBreakingIt() {
        FakeServer server;
        QVERIFY(startServer(server,
                            {{"replies",
                              {say(kernelBlock("def solve(x, y):\n    pass # kept")),
                               {{"status", 400}, {"body", "This model's maximum context length is 8192 tokens"}}}}}));
        FakeGate gate(10, 120);
        const Run run = runAttempt(settingsFor(server), gate, chattest::smallTask(workspace("context_full")));
        QVERIFY(!run.result.infrastructureError);
        QVERIFY2(contains(run.result.error, "outgrew the model's context"), run.result.error.c_str());
        QVERIFY(contains(run.result.finalKernel, "# kept"));
        QCOMPARE(gate.kernels.size(), std::size_t(1));
    }

    void unreachableEndpointIsAnInfrastructureError() {
        FakeGate gate(10, 120);
        const Run run = runAttempt(
            {{"base_url", "http://127.0.0.1:1/v1"}, {"model", "m"}, {"max_retries", 1}, {"backoff_initial_s", 0.01}},
            gate, chattest::smallTask(workspace("unreachable")));
        QVERIFY(run.result.infrastructureError);
        QVERIFY2(contains(run.result.error, "connection error"), run.result.error.c_str());
        QVERIFY(contains(run.result.error, "check that the server is up"));
    }

    void budgetExhaustionEndsTheAttemptAfterAFinalSkillTurn() {
        FakeServer server;
        QVERIFY(
            startServer(server, {{"replies", {say(kernelBlock("def solve(x, y):\n    pass") + skillBlock("- notes"))}},
                                 {"repeat_last", true}}));
        FakeGate gate(3, 120);
        const Run run = runAttempt(settingsFor(server), gate, chattest::smallTask(workspace("budget"), 3));
        QVERIFY2(run.result.error.empty(), run.result.error.c_str());
        QCOMPARE(gate.kernels.size(), std::size_t(3));
        QCOMPARE(server.requests().size(), std::size_t(4)); // three submissions, then the final SKILL.md turn
        const std::string last = server.lastMessage(3);
        QVERIFY2(contains(last, "Budget spent"), last.c_str());
        QVERIFY(contains(last, "REPORT-3"));
        QVERIFY(run.result.skill.has_value());
        QVERIFY(!run.result.finalKernel.empty());
    }

    void budgetExhaustionWithoutFinalSkillTurn() {
        FakeServer server;
        QVERIFY(startServer(server,
                            {{"replies", {say(kernelBlock("def solve(x, y):\n    pass"))}}, {"repeat_last", true}}));
        FakeGate gate(2, 120);
        const Run run = runAttempt(settingsFor(server, {{"final_skill_turn", false}}), gate,
                                   chattest::smallTask(workspace("budget_no_final"), 2));
        QCOMPARE(gate.kernels.size(), std::size_t(2));
        QCOMPARE(server.requests().size(), std::size_t(2));
    }

    void doneEarlyEndsWithoutSubmissions() {
        FakeServer server;
        QVERIFY(startServer(server, {{"replies", {say(skillBlock("- nothing to gain over eager") + "\n**DONE**")}}}));
        FakeGate gate(10, 120);
        const Run run = runAttempt(settingsFor(server), gate, chattest::smallTask(workspace("done_early")));
        QVERIFY2(run.result.error.empty(), run.result.error.c_str());
        QCOMPARE(gate.kernels.size(), std::size_t(0));
        QCOMPARE(server.requests().size(), std::size_t(1));
        QVERIFY(run.result.finalKernel.empty());
        QVERIFY(run.result.skill && contains(*run.result.skill, "nothing to gain"));
    }

    void skillOnlyReplyIsSavedAndNotSubmitted() {
        FakeServer server;
        QVERIFY(startServer(
            server,
            {{"replies", {say(skillBlock("- plan")), say(kernelBlock("def solve(x, y):\n    pass")), say("DONE")}}}));
        FakeGate gate(10, 120);
        const Run run = runAttempt(settingsFor(server), gate, chattest::smallTask(workspace("skill_only")));
        QCOMPARE(gate.kernels.size(), std::size_t(1));
        QVERIFY(contains(server.lastMessage(1), "nothing was graded"));
        QVERIFY(run.result.skill && contains(*run.result.skill, "- plan"));
    }

    void usageAndCostAreSummed() {
        const json usage1 = {
            {"prompt_tokens", 1000}, {"completion_tokens", 200}, {"prompt_tokens_details", {{"cached_tokens", 0}}}};
        const json usage2 = {
            {"prompt_tokens", 3000}, {"completion_tokens", 300}, {"prompt_tokens_details", {{"cached_tokens", 1000}}}};
        const json usage3 = {{"prompt_tokens", 4000}, {"completion_tokens", 100}};
        FakeServer server;
        QVERIFY(startServer(server, {{"replies",
                                      {say(kernelBlock("def solve(x, y):\n    pass"), usage1),
                                       say("oops, prose only", usage2), say("DONE", usage3)}}}));
        FakeGate gate(10, 120);
        const json price = {{"input_per_mtok", 2.0}, {"cache_per_mtok", 0.5}, {"output_per_mtok", 10.0}};
        const Run run =
            runAttempt(settingsFor(server, {{"price", price}}), gate, chattest::smallTask(workspace("usage")));
        QVERIFY2(run.result.error.empty(), run.result.error.c_str());
        QCOMPARE(run.result.usage.inputTokens.value_or(-1), std::int64_t(8000));
        QCOMPARE(run.result.usage.cacheTokens.value_or(-1), std::int64_t(1000));
        QCOMPARE(run.result.usage.outputTokens.value_or(-1), std::int64_t(600));
        // (8000 - 1000) × 2 + 1000 × 0.5 + 600 × 10 = 20500 USD per million tokens.
        QVERIFY(run.result.usage.costUsd.has_value());
        QCOMPARE(*run.result.usage.costUsd, 0.0205);
        QVERIFY(run.result.usage.agentSeconds.has_value());
    }

    void noUsageMeansUnknownTokensAndCost() {
        FakeServer server;
        QVERIFY(startServer(server, {{"replies", {say("DONE")}}}));
        FakeGate gate(10, 120);
        const Run run = runAttempt(settingsFor(server, {{"price", {{"input_per_mtok", 1}, {"output_per_mtok", 1}}}}),
                                   gate, chattest::smallTask(workspace("no_usage")));
        QVERIFY(!run.result.usage.inputTokens.has_value());
        QVERIFY(!run.result.usage.costUsd.has_value());
        QVERIFY(run.result.usage.agentSeconds.has_value());
    }

    void wallClockEndsASlowRequest() {
        FakeServer server;
        QVERIFY(startServer(server, {{"replies", {{{"delay_s", 20}, {"content", "late"}}}}}));
        FakeGate gate(10, 1.5);
        const Run run = runAttempt(settingsFor(server, {{"request_timeout_s", 60}}), gate,
                                   chattest::smallTask(workspace("wall_clock"), 10, 1.5));
        QVERIFY(run.result.timedOut);
        QVERIFY(!run.result.infrastructureError);
        QVERIFY2(run.seconds < 6, "the attempt outlived its wall clock");
    }

    void cancelAbortsAnInFlightRequest() {
        FakeServer server;
        QVERIFY(startServer(server, {{"replies", {{{"delay_s", 30}, {"content", "late"}}}}}));
        FakeGate gate(10, 120);
        std::atomic<bool> cancel{false};
        std::thread canceller([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
            cancel = true;
        });
        const Run run = runAttempt(settingsFor(server, {{"request_timeout_s", 60}}), gate,
                                   chattest::smallTask(workspace("cancel")), &cancel);
        canceller.join();
        QVERIFY2(run.seconds < 5, "cancel did not abort the request");
        QVERIFY(!run.result.infrastructureError);
        QVERIFY(contains(run.workspaceText, "cancelled"));
    }

    void cancelAbortsABackoffWait() {
        FakeServer server;
        QVERIFY(startServer(server, {{"replies", {{{"status", 429}, {"headers", {{"Retry-After", "60"}}}}}}}));
        FakeGate gate(10, 120);
        std::atomic<bool> cancel{false};
        std::thread canceller([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
            cancel = true;
        });
        const Run run = runAttempt(settingsFor(server), gate, chattest::smallTask(workspace("cancel_wait")), &cancel);
        canceller.join();
        QVERIFY2(run.seconds < 5, "cancel did not end the wait");
        QVERIFY(!run.result.infrastructureError);
    }

    void plantedKeyNeverLeaks() {
        qputenv(kPlantedKeyVariable, kPlantedKey);
        FakeServer server;
        QVERIFY(startServer(server, {{"replies",
                                      {{{"status", 500}, {"echo_auth", true}},
                                       say(kernelBlock("def solve(x, y):\n    pass")),
                                       {{"status", 401}, {"echo_auth", true}}}}}));
        FakeGate gate(10, 120);
        const Run run = runAttempt(settingsFor(server, {{"api_key_env", kPlantedKeyVariable}}), gate,
                                   chattest::smallTask(workspace("secrets")));
        // The key went to the server, and the server echoed it into error bodies the driver reported.
        QVERIFY(server.requests().at(0)["has_authorization"].get<bool>());
        QVERIFY(run.result.infrastructureError);
        QVERIFY2(contains(run.result.error, "HTTP 401"), run.result.error.c_str());
        QVERIFY2(contains(run.result.error, "[REDACTED]"), run.result.error.c_str());
        QVERIFY(!contains(run.result.error, kPlantedKey));
        QVERIFY(!run.workspaceText.empty());
        QVERIFY(!contains(run.workspaceText, kPlantedKey));
        QVERIFY(!contains(run.result.finalKernel, kPlantedKey));
        QVERIFY(mkb::redactRegisteredSecrets(std::string("x ") + kPlantedKey) == "x [REDACTED]");
        qunsetenv(kPlantedKeyVariable);
    }

    void settingsErrorsNameTheField_data() {
        QTest::addColumn<QString>("settings");
        QTest::addColumn<QString>("field");
        QTest::newRow("missing model") << R"({"base_url": "http://h/v1"})"
                                       << "'model'";
        QTest::newRow("missing base_url") << R"({"model": "m"})"
                                          << "'base_url'";
        QTest::newRow("bad url") << R"({"base_url": "ftp://h", "model": "m"})"
                                 << "'base_url'";
        QTest::newRow("key in config") << R"({"base_url": "http://h", "model": "m", "api_key": "sk-abcdefgh123"})"
                                       << "'api_key'";
        QTest::newRow("key as variable name")
            << R"({"base_url": "http://h", "model": "m", "api_key_env": "sk-abcdefgh123"})"
            << "'api_key_env'";
        QTest::newRow("unset variable")
            << R"({"base_url": "http://h", "model": "m", "api_key_env": "MKB_TEST_SURELY_UNSET_VARIABLE"})"
            << "MKB_TEST_SURELY_UNSET_VARIABLE";
        QTest::newRow("temperature") << R"({"base_url": "http://h", "model": "m", "temperature": "hot"})"
                                     << "'temperature'";
        QTest::newRow("top_p") << R"({"base_url": "http://h", "model": "m", "top_p": 3})"
                               << "'top_p'";
        QTest::newRow("max_tokens") << R"({"base_url": "http://h", "model": "m", "max_tokens": 0})"
                                    << "'max_tokens'";
        QTest::newRow("timeout") << R"({"base_url": "http://h", "model": "m", "request_timeout_s": -1})"
                                 << "'request_timeout_s'";
        QTest::newRow("retries") << R"({"base_url": "http://h", "model": "m", "max_retries": 1.5})"
                                 << "'max_retries'";
        QTest::newRow("price") << R"({"base_url": "http://h", "model": "m", "price": {"input_per_mtok": 1}})"
                               << "'price.output_per_mtok'";
        QTest::newRow("price key") << R"({"base_url": "http://h", "model": "m", "price": {"inputs": 1}})"
                                   << "'price.inputs'";
        QTest::newRow("authorization header")
            << R"({"base_url": "http://h", "model": "m", "extra_headers": {"Authorization": "Bearer x"}})"
            << "'extra_headers.Authorization'";
        QTest::newRow("unknown") << R"({"base_url": "http://h", "model": "m", "temprature": 1})"
                                 << "'temprature'";
        QTest::newRow("prompts_dir") << R"({"base_url": "http://h", "model": "m", "prompts_dir": "/nonexistent/x"})"
                                     << "/nonexistent/x";
    }

    void settingsErrorsNameTheField() {
        QFETCH(QString, settings);
        QFETCH(QString, field);
        auto driver = mkb::makeChatDriver(json::parse(settings.toStdString()));
        QVERIFY(!driver);
        QVERIFY2(contains(driver.error().message, field.toStdString()), driver.error().message.c_str());
        QVERIFY(!contains(driver.error().message, "sk-abcdefgh123"));
    }

    void settingsAreParsed() {
        const json settings = {{"base_url", "http://localhost:8000/v1/"},
                               {"model", "qwen"},
                               {"temperature", 0.2},
                               {"top_p", 0.9},
                               {"max_tokens", 4096},
                               {"request_timeout_s", 30},
                               {"max_retries", 3},
                               {"backoff_initial_s", 1},
                               {"backoff_max_s", 8},
                               {"price", {{"input_per_mtok", 1}, {"output_per_mtok", 4}}},
                               {"extra_headers", {{"X-Team", "kernels"}}}};
        auto parsed = mkb::parseChatSettings(settings);
        QVERIFY2(parsed, parsed ? "" : parsed.error().message.c_str());
        QCOMPARE(parsed->baseUrl, std::string("http://localhost:8000/v1"));
        QCOMPARE(parsed->maxTokens.value_or(0), 4096);
        QCOMPARE(parsed->price->cachePerMtok, 1.0); // no cache price: cached tokens cost what input does
        QCOMPARE(parsed->extraHeaders.size(), std::size_t(1));
    }

    void extraHeadersAndSamplingReachTheServer() {
        FakeServer server;
        QVERIFY(startServer(server, {{"replies", {say("DONE")}}}));
        FakeGate gate(10, 120);
        runAttempt(settingsFor(server,
                               {{"extra_headers", {{"X-Team", "kernels"}}}, {"temperature", 0.3}, {"max_tokens", 777}}),
                   gate, chattest::smallTask(workspace("headers")));
        const json request = server.requests().at(0);
        QCOMPARE(request["extra"]["X-Team"].get<std::string>(), std::string("kernels"));
        QCOMPARE(request["body"]["temperature"].get<double>(), 0.3);
        QCOMPARE(request["body"]["max_tokens"].get<int>(), 777);
        QVERIFY(!request["body"].contains("top_p"));
        QVERIFY(!request["has_authorization"].get<bool>());
    }

    void driverFactoryBuildsTheChatDriver() {
        auto driver = mkb::makeDriver("chat", {{"base_url", "http://127.0.0.1:1/v1"}, {"model", "m"}});
        QVERIFY2(driver, driver ? "" : driver.error().message.c_str());
        QCOMPARE((*driver)->name(), std::string("chat"));
    }
};

QTEST_GUILESS_MAIN(ChatDriverTest)
#include "tst_chat_driver.moc"
