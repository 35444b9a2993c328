// One chat attempt as a conversation: turns of reply, parse, submit and feedback, with one method per way it ends.
#pragma once

#include "core/agents/chat_endpoint.h"
#include "core/agents/driver.h"
#include "core/agents/prompt_builder.h"
#include "core/agents/reply_parser.h"
#include "core/agents/workspace.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

namespace mkb {

/// Lives for one attempt. The log and transcript files are opened at construction and appended to as it runs.
class ChatConversation {
public:
    ChatConversation(const ChatEndpoint& endpoint, const PromptBuilder& prompts, const AttemptTask& task,
                     SubmissionGate& gate, const std::atomic<bool>& cancel);

    /// Runs turns until one of the endings below, and returns what the attempt came to.
    AttemptResult run();

private:
    // Steps of a turn. Each returns the attempt's result when the step ended it, and nothing to go on.
    std::optional<AttemptResult> endIfRequestFailed(const Completion& completion);
    std::optional<AttemptResult> askToCorrect(const ReplyParse& parse, const std::string& content);
    std::optional<AttemptResult> remindOfKernel();
    std::optional<AttemptResult> submit(const std::string& kernel);
    void countUsage(const Completion& completion);
    void keepInWorkspace(const ParsedReply& reply);
    void say(const std::string& content); // appends a user message to the conversation and the transcript

    // The ways an attempt ends.
    AttemptResult endCancelled();
    AttemptResult endOutOfTime(const std::string& why);
    AttemptResult endContextFull(const std::string& error);
    AttemptResult endEndpointFailed(const std::string& error);
    AttemptResult endPromptUnbuildable(const std::string& error);
    AttemptResult endTooManyMalformed(const std::string& lastDefect);
    AttemptResult endNoProgress();
    AttemptResult endModelDone(const ParsedReply& reply);
    AttemptResult endSubmissionsSpent();
    AttemptResult endWithFinalSkill(const ReplyParse& parse);
    AttemptResult finish(const std::string& why);

    double elapsed() const;
    double secondsLeft() const;
    void note(const std::string& line);
    void record(const std::string& role, const std::string& content);

    const ChatEndpoint& endpoint_;
    const ChatSettings& settings_;
    const PromptBuilder& prompts_;
    const AttemptTask& task_;
    SubmissionGate& gate_;
    const std::atomic<bool>& cancel_;
    const std::chrono::steady_clock::time_point started_;
    WorkspaceLayout layout_; // the workspace mirrors the latest files, so it reads like a terminal agent's after
    std::ofstream log_;
    std::ofstream transcript_;

    AttemptResult result_;
    nlohmann::json messages_ = nlohmann::json::array();
    int turn_ = 0;
    int retries_ = 0;
    int malformedStreak_ = 0;
    int idleStreak_ = 0;
    int submissions_ = 0;
    bool finalSkillTurn_ = false; // the budget is spent; this reply may only bring SKILL.md
    std::int64_t inputTokens_ = 0;
    std::int64_t cachedTokens_ = 0;
    std::int64_t outputTokens_ = 0;
    bool usageReported_ = false;
    bool cacheReported_ = false;
};

} // namespace mkb
