// Test fixtures for the chat driver: the scripted OpenAI-compatible server, a fake submission gate, a small task.
#pragma once

#include "support/testpaths.h"

#include "core/agents/driver.h"

#include <QDir>
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace chattest {

/// tests/chat/fake_openai_server.py started with a script; stopped with the fixture.
class FakeServer {
public:
    ~FakeServer() {
        if (process_.state() != QProcess::NotRunning) {
            process_.kill();
            process_.waitForFinished(5000);
        }
    }

    /// Starts the server; on failure, why says what happened.
    bool start(const nlohmann::json& script, std::string* why) {
        const std::string scriptPath = dir_.filePath("script.json").toStdString();
        std::ofstream(scriptPath) << script.dump();
        logPath_ = dir_.filePath("requests.jsonl").toStdString();
        const QString server =
            QString::fromStdString((mkbtest::sourceDir() / "tests" / "chat" / "fake_openai_server.py").string());
        process_.start(
            QString::fromStdString(mkbtest::testPython()),
            {server, "--script", QString::fromStdString(scriptPath), "--log", QString::fromStdString(logPath_)});
        QElapsedTimer timer;
        timer.start();
        std::string output;
        while (timer.elapsed() < 60000) {
            if (process_.state() == QProcess::NotRunning && !process_.waitForStarted(0)) {
                *why = "the fake server did not start: " + process_.errorString().toStdString() + " " +
                       process_.readAllStandardError().toStdString();
                return false;
            }
            process_.waitForReadyRead(200);
            output += process_.readAllStandardOutput().toStdString();
            const std::size_t at = output.find("PORT ");
            if (at != std::string::npos && output.find('\n', at) != std::string::npos) {
                port_ = std::stoi(output.substr(at + 5));
                return true;
            }
        }
        *why = "the fake server printed no port within 60 s: " + output;
        return false;
    }

    std::string baseUrl() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

    /// The requests the server received, in order.
    std::vector<nlohmann::json> requests() const {
        std::vector<nlohmann::json> out;
        std::ifstream log(logPath_);
        for (std::string line; std::getline(log, line);) {
            out.push_back(nlohmann::json::parse(line));
        }
        return out;
    }

    /// The last message the driver sent in request number index (0-based).
    std::string lastMessage(std::size_t index) const {
        const auto all = requests();
        if (index >= all.size()) {
            return "<no request " + std::to_string(index) + ">";
        }
        return all[index]["body"]["messages"].back()["content"].get<std::string>();
    }

private:
    QTemporaryDir dir_;
    QProcess process_;
    std::string logPath_;
    int port_ = 0;
};

/// A gate that records kernels and answers with a made-up report.
class FakeGate final : public mkb::SubmissionGate {
public:
    FakeGate(int maxSubmissions, double wallSeconds)
        : maxSubmissions_(maxSubmissions), wallSeconds_(wallSeconds), started_(std::chrono::steady_clock::now()) {}

    mkb::SubmitOutcome submit(const std::string& kernelSource) override {
        std::lock_guard lock(mutex_);
        mkb::SubmitOutcome outcome;
        if (used_ >= maxSubmissions_) {
            outcome.reportText = "refused: no submissions left";
        } else {
            ++used_;
            kernels.push_back(kernelSource);
            outcome.counted = true;
            mkb::Verdict verdict;
            verdict.imported = verdict.correct = verdict.passed = true;
            verdict.speedupVsEager = 1.0 + used_;
            outcome.verdict = verdict;
            outcome.reportText = "REPORT-" + std::to_string(used_) + ": correct on 5/5 draws, speedup " +
                                 std::to_string(used_ + 1) + ".00x";
        }
        outcome.submissionsLeft = maxSubmissions_ - used_;
        outcome.secondsLeft = secondsLeftLocked();
        return outcome;
    }
    int submissionsLeft() const override {
        std::lock_guard lock(mutex_);
        return maxSubmissions_ - used_;
    }
    double secondsLeft() const override {
        std::lock_guard lock(mutex_);
        return secondsLeftLocked();
    }

    std::vector<std::string> kernels;

private:
    double secondsLeftLocked() const {
        return wallSeconds_ - std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    }
    mutable std::mutex mutex_;
    int maxSubmissions_;
    int used_ = 0;
    double wallSeconds_;
    std::chrono::steady_clock::time_point started_;
};

inline mkb::Problem vectorAddProblem() {
    mkb::Problem problem;
    problem.suite = "problems";
    problem.number = 1;
    problem.slug = "vector_add";
    problem.family = "mlp_norm";
    problem.title = "Add two vectors";
    problem.source = "\"\"\"Add two vectors\"\"\"\nimport torch\n\ndef reference(x, y):\n    return x + y\n\n"
                     "def make_inputs(device='cpu'):\n    return [torch.randn(1024, device=device), "
                     "torch.randn(1024, device=device)]\n";
    problem.fingerprint = "0000";
    return problem;
}

inline mkb::DslDescriptor tinyDsl() {
    mkb::DslDescriptor dsl;
    dsl.id = "triton";
    dsl.displayName = "Triton";
    dsl.importName = "triton";
    dsl.prompt = "TINY-DSL-PROMPT: write @triton.jit kernels.";
    dsl.compliance.kernelMarkers = {"@triton\\.jit"};
    dsl.compliance.forbiddenImports = {"cupy"};
    dsl.compliance.forbiddenPatterns = {"torch\\.compile"};
    return dsl;
}

inline mkb::AttemptTask smallTask(const std::filesystem::path& workspace, int maxSubmissions = 10,
                                  double wallSeconds = 120) {
    mkb::AttemptTask task;
    task.problem = vectorAddProblem();
    task.dsl = tinyDsl();
    task.armName = "solo_triton";
    task.budget.maxSubmissions = maxSubmissions;
    task.budget.wallSeconds = wallSeconds;
    task.workspace = workspace;
    return task;
}

inline std::string kernelBlock(const std::string& body) {
    return "```python title=kernel.py\n" + body + "\n```\n";
}
inline std::string skillBlock(const std::string& body) {
    return "```markdown title=SKILL.md\n" + body + "\n```\n";
}

/// A scripted 200 reply with this content and, optionally, usage.
inline nlohmann::json say(const std::string& content, nlohmann::json usage = nullptr) {
    nlohmann::json step = {{"content", content}};
    if (!usage.is_null()) {
        step["usage"] = usage;
    }
    return step;
}

inline std::string readAll(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace chattest
