// Ctrl+C and SIGTERM for long-running verbs: the handler only raises a flag that the work polls.
#pragma once

#include <atomic>

namespace mkb::cli {

/// Set by SIGINT/SIGTERM once installInterruptHandler() ran; verbs pass its address as their cancel flag.
std::atomic<bool>& interruptRequested();

/// Installs the handler for SIGINT and SIGTERM (idempotent).
void installInterruptHandler();

} // namespace mkb::cli
