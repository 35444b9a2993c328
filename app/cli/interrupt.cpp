// Ctrl+C and SIGTERM for long-running verbs: one flag, one handler.
#include "app/cli/interrupt.h"

#include <csignal>

namespace mkb::cli {
namespace {

std::atomic<bool> requested{false};

void onInterrupt(int) {
    requested.store(true);
}

} // namespace

std::atomic<bool>& interruptRequested() {
    return requested;
}

void installInterruptHandler() {
    struct sigaction action = {};
    action.sa_handler = onInterrupt;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, nullptr);
    ::sigaction(SIGTERM, &action, nullptr);
}

} // namespace mkb::cli
