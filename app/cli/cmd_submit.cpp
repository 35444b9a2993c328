// `mkb submit`: a terminal agent's way to grade its kernel.py through the running `mkb run`, under its budget.
#include "app/cli/args.h"
#include "app/cli/command.h"

#include "core/agents/command_driver.h"
#include "core/util/text.h"

#include <cstdlib>
#include <iostream>

namespace mkb::cli {
namespace {

const char* const kSubmitIntro = R"(usage: mkb submit [KERNEL]

Grades KERNEL (default ./kernel.py) through the `mkb run` attempt this shell belongs to, and prints the grader
report with the submissions and seconds left. Only works inside an attempt started by the command driver, which
sets MKB_SUBMIT_SOCKET; the budget is enforced there: a submission over the size limit, or one that never entered
evaluation, is not counted; once the submissions or the wall clock are spent nothing more is graded.

)";

const char* const kSubmitExitCodes =
    R"(exit codes: 0 graded and passed, 1 graded and failed, 2 bad command line or not inside an attempt,
            3 the kernel file is missing, 5 not graded (budget spent, too large, grader failure, attempt ended)
)";

const OptionTable& submitOptions() {
    static const OptionTable table = {
        numberOption("timeout", "S", "how long to wait for the report, in seconds").withDefault(3600).above(0),
    };
    return table;
}

std::string submitHelp() {
    return verbHelp(kSubmitIntro, submitOptions(), kSubmitExitCodes);
}

int runSubmit(const std::vector<std::string>& rawArgs) {
    auto parsed = parseOptions(submitOptions(), rawArgs);
    if (!parsed) {
        return fail(kExitUsage, parsed.error().message + " (mkb submit --help)");
    }
    if (parsed->help) {
        std::cout << submitHelp();
        return kExitOk;
    }
    if (parsed->positionals.size() > 1) {
        return fail(kExitUsage, "submit takes at most one KERNEL file (mkb submit --help)");
    }
    const char* socket = std::getenv(kSubmitSocketVariable);
    if (!socket || !*socket) {
        return fail(kExitUsage, std::string("submit: ") + kSubmitSocketVariable +
                                    " is not set; mkb submit only works inside an attempt started by mkb run "
                                    "--driver command");
    }
    const std::string kernelPath = parsed->positionals.empty() ? "kernel.py" : parsed->positionals.front();
    auto kernel = readFile(kernelPath);
    if (!kernel) {
        return fail(kExitBadInput, "submit: " + kernel.error().message);
    }
    auto reply = requestSubmission(socket, *kernel, parsed->number("timeout"));
    if (!reply) {
        return fail(kExitInfrastructure, reply.error().message);
    }
    std::cout << reply->report;
    if (!reply->report.empty() && reply->report.back() != '\n') {
        std::cout << '\n';
    }
    std::cout.flush();
    if (!reply->counted) {
        return kExitInfrastructure;
    }
    return reply->passed ? kExitOk : kExitFailed;
}

const bool registered = registerCommand(
    {"submit", "grade kernel.py from inside a command-driver attempt (budgeted)", submitHelp(), runSubmit});

} // namespace
} // namespace mkb::cli
