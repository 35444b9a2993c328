// The mkb command table: each verb lives in its own file and registers itself here.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace mkb::cli {

/// Documented exit codes (also printed by `mkb --help`).
enum ExitCode : int {
    kExitOk = 0,             // success
    kExitFailed = 1,         // the command ran, and what it checked failed (invalid problems, failed grading)
    kExitUsage = 2,          // bad command line: unknown verb or flag, missing argument
    kExitBadInput = 3,       // an input file or folder is missing, unreadable or malformed
    kExitStore = 4,          // the project store cannot be opened, is corrupt or newer than this build
    kExitInfrastructure = 5, // the grader, GPU, network or model endpoint failed
    kExitInterrupted = 130,  // stopped by Ctrl+C; rerunning the same command resumes
};

struct Command {
    std::string name;     // "problems", "plan", "db", ...
    std::string summary;  // one line for `mkb --help`
    std::string help;     // the full text for `mkb NAME --help`
    std::function<int(const std::vector<std::string>& args)> run;  // args exclude the verb itself
};

/// Called from a static initialiser in each command's file.
bool registerCommand(Command command);
const std::vector<Command>& commands();

/// Prints "mkb: MESSAGE" on stderr (one line) and returns the code.
int fail(int code, const std::string& message);

} // namespace mkb::cli
