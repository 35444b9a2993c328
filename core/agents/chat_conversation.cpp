// The chat attempt loop: instruction, reply, parse, submit, report back; usage, cost and redacted logs.
#include "core/agents/chat_conversation.h"

#include "core/agents/chat_driver.h"
#include "core/util/text.h"

#include <algorithm>
#include <cstdio>
#include <system_error>

namespace mkb {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string oneDecimal(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", value);
    return buffer;
}

fs::path preparedWorkspace(const fs::path& workspace) {
    std::error_code ec;
    fs::create_directories(workspace, ec);
    return workspace;
}

} // namespace

ChatConversation::ChatConversation(const ChatEndpoint& endpoint, const PromptBuilder& prompts, const AttemptTask& task,
                                   SubmissionGate& gate, const std::atomic<bool>& cancel)
    : endpoint_(endpoint), settings_(endpoint.settings()), prompts_(prompts), task_(task), gate_(gate), cancel_(cancel),
      started_(std::chrono::steady_clock::now()),
      layout_(workspaceLayout(preparedWorkspace(task.workspace), task.problem)),
      log_(task.workspace / kChatLogFile, std::ios::app),
      transcript_(task.workspace / kChatTranscriptFile, std::ios::app) {}

double ChatConversation::elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

double ChatConversation::secondsLeft() const {
    return std::min(gate_.secondsLeft(), task_.budget.wallSeconds - elapsed());
}

void ChatConversation::note(const std::string& line) {
    log_ << "[+" << oneDecimal(elapsed()) << " s] " << endpoint_.redactor().redact(line) << '\n' << std::flush;
}

void ChatConversation::record(const std::string& role, const std::string& content) {
    const std::string kept = content.size() > settings_.maxReplyBytes
                                 ? content.substr(0, settings_.maxReplyBytes) + "\n[… cut by the workbench]"
                                 : content;
    json line = {{"turn", turn_}, {"role", role}, {"content", endpoint_.redactor().redact(kept)}};
    transcript_ << line.dump(-1, ' ', false, json::error_handler_t::replace) << '\n' << std::flush;
}

void ChatConversation::say(const std::string& content) {
    messages_.push_back({{"role", "user"}, {"content", content}});
    record("user", content);
}

void ChatConversation::keepInWorkspace(const ParsedReply& reply) {
    for (const auto& [file, text] : {std::pair{layout_.kernel, reply.kernel}, std::pair{layout_.skill, reply.skill}}) {
        if (text) {
            if (Status written = writeFileAtomically(file, *text); !written) {
                note("cannot mirror into the workspace: " + written.error().message);
            }
        }
    }
}

AttemptResult ChatConversation::run() {
    auto system = prompts_.systemMessage(task_);
    auto instruction = prompts_.instruction(task_, settings_.maxReplyBytes);
    if (!system || !instruction) {
        return endPromptUnbuildable((!system ? system.error() : instruction.error()).message);
    }
    messages_ =
        json::array({{{"role", "system"}, {"content", *system}}, {{"role", "user"}, {"content", *instruction}}});
    record("system", *system);
    record("user", *instruction);
    note("attempt starts: " + task_.armName + " on " + task_.problem.name() + " with model " + settings_.model +
         " at " + settings_.baseUrl);

    while (true) {
        if (cancel_.load()) {
            return endCancelled();
        }
        if (secondsLeft() <= 0) {
            return endOutOfTime("the wall clock ran out");
        }
        ++turn_;
        note("request " + std::to_string(turn_) + ": " + std::to_string(messages_.size()) + " messages");
        const Completion completion =
            endpoint_.complete(messages_, secondsLeft(), cancel_, [this](const std::string& line) { note(line); });
        retries_ += completion.retries;
        if (auto ended = endIfRequestFailed(completion)) {
            return *ended;
        }
        countUsage(completion);
        record("assistant", completion.content);
        note("reply " + std::to_string(turn_) + ": " + std::to_string(completion.content.size()) + " bytes, finish " +
             (completion.finishReason.empty() ? "unknown" : completion.finishReason) +
             (completion.retries ? ", " + std::to_string(completion.retries) + " retries" : ""));

        ReplyParse parse = parseReply(completion.content, settings_.maxReplyBytes);
        if (parse.defect == ReplyDefect::None && completion.invalidUtf8) {
            parse = ReplyParse{ReplyDefect::InvalidUtf8, "the reply was not valid UTF-8", {}};
        }
        if (finalSkillTurn_) {
            return endWithFinalSkill(parse);
        }
        if (parse.defect != ReplyDefect::None) {
            if (auto ended = askToCorrect(parse, completion.content)) {
                return *ended;
            }
            continue;
        }
        malformedStreak_ = 0;
        messages_.push_back({{"role", "assistant"}, {"content", completion.content}});
        if (parse.reply.skill) {
            result_.skill = parse.reply.skill;
        }
        keepInWorkspace(parse.reply);
        if (parse.reply.done) {
            return endModelDone(parse.reply);
        }
        if (!parse.reply.kernel) {
            if (auto ended = remindOfKernel()) {
                return *ended;
            }
            continue;
        }
        idleStreak_ = 0;
        if (auto ended = submit(*parse.reply.kernel)) {
            return *ended;
        }
    }
}

std::optional<AttemptResult> ChatConversation::endIfRequestFailed(const Completion& completion) {
    if (completion.cancelled) {
        return endCancelled();
    }
    if (completion.deadlinePassed) {
        return endOutOfTime("the wall clock ran out during a request");
    }
    if (completion.contextFull) {
        return endContextFull(completion.error);
    }
    if (!completion.ok) {
        return endEndpointFailed(completion.error);
    }
    return std::nullopt;
}

void ChatConversation::countUsage(const Completion& completion) {
    if (completion.promptTokens || completion.completionTokens) {
        usageReported_ = true;
        inputTokens_ += completion.promptTokens.value_or(0);
        outputTokens_ += completion.completionTokens.value_or(0);
    }
    if (completion.cachedTokens) {
        cacheReported_ = true;
        cachedTokens_ += *completion.cachedTokens;
    }
}

std::optional<AttemptResult> ChatConversation::askToCorrect(const ReplyParse& parse, const std::string& content) {
    ++malformedStreak_;
    note("malformed reply (" + std::string(toString(parse.defect)) + "): " + parse.detail);
    if (malformedStreak_ >= settings_.maxMalformedReplies) {
        return endTooManyMalformed(parse.detail);
    }
    std::string kept = content;
    if (parse.defect == ReplyDefect::TooLarge) {
        kept = repairedUtf8(std::string_view(kept).substr(0, 4000)) + "\n[… the rest of this reply was cut]";
    }
    auto correction = prompts_.correction(parse.detail, gate_.submissionsLeft(), secondsLeft());
    if (!correction) {
        return endPromptUnbuildable(correction.error().message);
    }
    messages_.push_back({{"role", "assistant"}, {"content", repairedUtf8(kept)}});
    say(*correction);
    return std::nullopt;
}

std::optional<AttemptResult> ChatConversation::remindOfKernel() {
    if (++idleStreak_ >= settings_.maxMalformedReplies) {
        return endNoProgress();
    }
    auto reminder = prompts_.noKernelReminder(gate_.submissionsLeft(), secondsLeft());
    if (!reminder) {
        return endPromptUnbuildable(reminder.error().message);
    }
    say(*reminder);
    return std::nullopt;
}

std::optional<AttemptResult> ChatConversation::submit(const std::string& kernel) {
    result_.finalKernel = kernel;
    if (gate_.submissionsLeft() <= 0) {
        return endSubmissionsSpent();
    }
    ++submissions_;
    note("submission " + std::to_string(submissions_) + ": " + std::to_string(kernel.size()) + " bytes of kernel.py");
    const SubmitOutcome outcome = gate_.submit(kernel);
    note("submission " + std::to_string(submissions_) + " " + (outcome.counted ? "counted" : "not counted") + ", " +
         (outcome.verdict ? (outcome.verdict->passed ? "passed" : "failed") : "not graded") + "; " +
         std::to_string(outcome.submissionsLeft) + " left, " + oneDecimal(outcome.secondsLeft) + " s left");
    const FeedbackFacts facts{submissions_, outcome};
    if (cancel_.load()) {
        return endCancelled();
    }
    if (outcome.secondsLeft <= 0 || secondsLeft() <= 0) {
        return endOutOfTime("the wall clock ran out");
    }
    const bool spent = outcome.submissionsLeft <= 0;
    if (spent && !settings_.finalSkillTurn) {
        return endSubmissionsSpent();
    }
    auto reply = spent ? prompts_.finalSkillRequest(facts) : prompts_.feedback(facts);
    if (!reply) {
        return endPromptUnbuildable(reply.error().message);
    }
    finalSkillTurn_ = spent;
    say(*reply);
    return std::nullopt;
}

AttemptResult ChatConversation::endCancelled() {
    return finish("cancelled");
}

AttemptResult ChatConversation::endOutOfTime(const std::string& why) {
    result_.timedOut = true;
    return finish(why);
}

AttemptResult ChatConversation::endContextFull(const std::string& error) {
    result_.error = error;
    return finish("the context is full");
}

AttemptResult ChatConversation::endEndpointFailed(const std::string& error) {
    result_.error = error;
    result_.infrastructureError = true;
    return finish("the endpoint failed");
}

AttemptResult ChatConversation::endPromptUnbuildable(const std::string& error) {
    result_.error = error;
    result_.infrastructureError = true;
    return finish("the prompt could not be built");
}

AttemptResult ChatConversation::endTooManyMalformed(const std::string& lastDefect) {
    result_.error =
        "the model sent " + std::to_string(malformedStreak_) + " unusable replies in a row (last: " + lastDefect + ")";
    return finish("too many malformed replies");
}

AttemptResult ChatConversation::endNoProgress() {
    result_.error = "the model sent " + std::to_string(idleStreak_) + " replies in a row without kernel.py or DONE";
    return finish("no progress");
}

AttemptResult ChatConversation::endModelDone(const ParsedReply& reply) {
    if (reply.kernel) {
        result_.finalKernel = *reply.kernel;
    }
    return finish("the model said DONE");
}

AttemptResult ChatConversation::endSubmissionsSpent() {
    return finish("no submissions left");
}

AttemptResult ChatConversation::endWithFinalSkill(const ReplyParse& parse) {
    if (parse.defect == ReplyDefect::None && parse.reply.skill) {
        result_.skill = parse.reply.skill;
        keepInWorkspace({std::nullopt, parse.reply.skill, false});
    }
    if (parse.reply.kernel) {
        note("the final-skill reply also held a kernel.py; it is ignored (no submissions left)");
    }
    return finish(parse.defect == ReplyDefect::None
                      ? "submissions spent, final SKILL.md received"
                      : "submissions spent, final reply unusable (" + std::string(toString(parse.defect)) + ")");
}

AttemptResult ChatConversation::finish(const std::string& why) {
    if (usageReported_) {
        result_.usage.inputTokens = inputTokens_;
        result_.usage.outputTokens = outputTokens_;
        if (cacheReported_) {
            result_.usage.cacheTokens = cachedTokens_;
        }
        if (settings_.price) {
            result_.usage.costUsd = costUsd(*settings_.price, inputTokens_, cachedTokens_, outputTokens_);
        }
    }
    result_.usage.agentSeconds = elapsed();
    result_.error = endpoint_.redactor().redact(result_.error);
    note("attempt ends: " + why + "; " + std::to_string(turn_) + " replies, " + std::to_string(retries_) +
         " retries, " +
         (usageReported_ ? std::to_string(inputTokens_) + " prompt tokens (" + std::to_string(cachedTokens_) +
                               " cached), " + std::to_string(outputTokens_) + " completion tokens"
                         : std::string("usage not reported")));
    return result_;
}

} // namespace mkb
