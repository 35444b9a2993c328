// The driver factory: picks the reference, command or chat driver by kind.
#include "core/agents/driver.h"

#include "core/agents/command_driver.h"
#include "core/agents/reference_driver.h"

#if __has_include("core/agents/chat_driver.h")
#include "core/agents/chat_driver.h"
#define MKB_HAVE_CHAT_DRIVER 1
#endif

#include <nlohmann/json.hpp>

namespace mkb {

SubmissionGate::~SubmissionGate() = default;
AgentDriver::~AgentDriver() = default;

Result<std::unique_ptr<AgentDriver>> makeDriver(const std::string& kind, const nlohmann::json& settings) {
    if (!settings.is_null() && !settings.is_object()) {
        return makeError("driver '" + kind + "': the settings must be a JSON object; check --driver-config");
    }
    const nlohmann::json object = settings.is_null() ? nlohmann::json::object() : settings;
    if (kind == "reference") {
        return makeReferenceDriver(object);
    }
    if (kind == "command") {
        return makeCommandDriver(object);
    }
    if (kind == "chat") {
#ifdef MKB_HAVE_CHAT_DRIVER
        return makeChatDriver(object);
#else
        return makeError("driver 'chat' is not built into this mkb yet; use --driver reference or --driver command");
#endif
    }
    return makeError("unknown driver '" + kind + "'; use reference, command or chat");
}

} // namespace mkb
