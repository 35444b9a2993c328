// Secret redaction: plain substring replacement of every registered value, longest first.
#include "core/agents/secrets.h"

#include <algorithm>
#include <mutex>

namespace mkb {

void SecretRedactor::add(std::string secret) {
    if (secret.size() < kMinimumSecretLength || std::find(secrets_.begin(), secrets_.end(), secret) != secrets_.end()) {
        return;
    }
    secrets_.push_back(std::move(secret));
    std::stable_sort(secrets_.begin(), secrets_.end(),
                     [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

std::string SecretRedactor::redact(std::string_view text) const {
    std::string out(text);
    for (const std::string& secret : secrets_) {
        std::size_t at = 0;
        while ((at = out.find(secret, at)) != std::string::npos) {
            out.replace(at, secret.size(), kRedactedMarker);
            at += kRedactedMarker.size();
        }
    }
    return out;
}

namespace {

std::mutex& registryMutex() {
    static std::mutex mutex;
    return mutex;
}

SecretRedactor& registry() {
    static SecretRedactor redactor;
    return redactor;
}

} // namespace

void registerSecret(const std::string& secret) {
    std::lock_guard lock(registryMutex());
    registry().add(secret);
}

std::string redactRegisteredSecrets(std::string_view text) {
    std::lock_guard lock(registryMutex());
    return registry().redact(text);
}

} // namespace mkb
