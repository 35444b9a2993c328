// The mkb entry point: dispatches to the verb's command and turns any escaped exception into one line.
#include "app/cli/command.h"
#include "core/util/text.h"

#include "mkb/commit.h"
#include "mkb/version.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>

namespace mkb::cli {
namespace {

std::vector<Command>& commandTable() {
    static std::vector<Command> table;
    return table;
}

void printUsage() {
    std::cout << "usage: mkb VERB [ARGS...]    (mkb VERB --help for details)\n\n"
                 "MetaKernelBench Workbench: plan, run, grade and analyse kernel knowledge-transfer benchmarks.\n\n"
                 "verbs:\n";
    std::vector<Command> sorted = commandTable();
    std::sort(sorted.begin(), sorted.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
    for (const Command& command : sorted) {
        std::printf("  %-10s %s\n", command.name.c_str(), command.summary.c_str());
    }
    std::cout << "\noptions:\n"
                 "  --version  print the version and git commit\n"
                 "  --help     this text\n\n"
                 "environment:\n"
                 "  MKB_STORE     the project store used when --store is not given\n"
                 "  MKB_DATA_DIR  the folder holding problems/, resources/ and the grader\n\n"
                 "exit codes:\n"
                 "  0    success\n"
                 "  1    the command ran and what it checked failed (invalid problems, failed grading)\n"
                 "  2    bad command line (unknown verb or option, missing argument)\n"
                 "  3    an input file or folder is missing, unreadable or malformed; or an output cannot be written\n"
                 "  4    the project store cannot be opened, is corrupt or is newer than this build\n"
                 "  5    infrastructure failure: grader, GPU, network or model endpoint\n"
                 "  130  interrupted (Ctrl+C); running the same command again resumes\n";
}

/// Flushes standard output and turns a failed write (a full disk, `> /dev/full`, a closed pipe) into one line and a
/// non-zero exit, so a verb whose output was lost never exits 0. A verb that already failed keeps its own code and
/// line.
int finish(int code) {
    std::cout.flush();
    const bool streamFailed = !std::cout;
    errno = 0;
    const bool flushFailed = std::fflush(stdout) != 0;
    const int error = errno;
    if ((streamFailed || flushFailed || std::ferror(stdout)) && code == kExitOk) {
        std::cerr << "mkb: cannot write to standard output"
                  << (error != 0 ? std::string(": ") + std::strerror(error) : std::string()) +
                         " (the output is incomplete); redirect it to a file on a disk with free space, or use "
                         "--output where the verb has it\n";
        return kExitBadInput;
    }
    return code;
}

} // namespace

bool registerCommand(Command command) {
    commandTable().push_back(std::move(command));
    return true;
}

const std::vector<Command>& commands() {
    return commandTable();
}

int fail(int code, const std::string& message) {
    std::cerr << "mkb: " << safeOneLine(message) << '\n'; // one line, whatever names or values it quotes
    return code;
}

} // namespace mkb::cli

int main(int argc, char** argv) {
    using namespace mkb::cli;
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        if (args.size() >= 2 && args[0] == "help") {
            args = {args[1], "--help"};
        } else {
            printUsage();
            return finish(args.empty() ? kExitUsage : kExitOk);
        }
    }
    if (args[0] == "--version" || args[0] == "version") {
        std::cout << "mkb " << mkb::kVersion << " (commit " << mkb::kGitCommit << ")\n";
        return finish(kExitOk);
    }
    const std::string verb = args[0];
    for (const Command& command : commands()) {
        if (command.name == verb) {
            std::vector<std::string> rest(args.begin() + 1, args.end());
            if (!rest.empty() && (rest[0] == "--help" || rest[0] == "-h") && rest.size() == 1) {
                std::cout << command.help;
                return finish(kExitOk);
            }
            try {
                return finish(command.run(rest));
            } catch (const std::exception& error) {
                return fail(kExitInfrastructure,
                            std::string("internal error in '") + verb + "': " + error.what() + " (please report this)");
            }
        }
    }
    return fail(kExitUsage, "unknown verb '" + verb + "' (mkb --help lists the verbs)");
}
