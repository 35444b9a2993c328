// The command driver: a terminal agent started in the workspace, grading through `mkb submit` over a Unix socket.
#pragma once

#include "core/agents/driver.h"

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <memory>
#include <string>

namespace mkb {

/// Settings from the driver config JSON:
///   "command": the agent's command line for /bin/sh -c, with placeholders {workspace}, {instruction} (the path of
///              INSTRUCTION.md) and {submit} (a command that grades ./kernel.py); required
///   "mkb": the mkb binary `submit` runs (default: this very program)
///   "kill_grace_s": seconds between SIGTERM and SIGKILL of the agent's process group (default 2)
struct CommandSettings {
    std::string command;
    std::filesystem::path mkb;
    double killGraceSeconds = 2;
};

Result<CommandSettings> parseCommandSettings(const nlohmann::json& settings);

/// Replaces {workspace}, {instruction} and {submit} (each shell-quoted where it is a path).
std::string expandCommandLine(const std::string& command, const std::filesystem::path& workspace,
                              const std::filesystem::path& instruction, const std::string& submitCommand);

/// The environment variable that tells `mkb submit` where the running attempt listens.
inline constexpr const char* kSubmitSocketVariable = "MKB_SUBMIT_SOCKET";

/// The wire format: one JSON line each way. Request {"kernel": "<source>"}; the reply is submitReplyJson.
std::string submitReplyJson(const SubmitOutcome& outcome);

/// What `mkb submit` gets back.
struct SubmitReply {
    bool counted = false;
    bool graded = false;
    bool passed = false;
    std::string report;
    int submissionsLeft = 0;
    double secondsLeft = 0;
};

/// Connects to the attempt's socket, sends the kernel and waits (up to timeoutS) for the reply.
/// The error says what failed and that `mkb submit` only works inside an attempt started by `mkb run`.
Result<SubmitReply> requestSubmission(const std::string& socketPath, const std::string& kernelSource, double timeoutS);

Result<std::unique_ptr<AgentDriver>> makeCommandDriver(const nlohmann::json& settings);

} // namespace mkb
