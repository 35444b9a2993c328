// Keeping secrets out of text: a redactor that replaces known secret values in anything bound for logs or errors.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mkb {

/// What a secret's value is replaced with.
inline constexpr std::string_view kRedactedMarker = "[REDACTED]";

/// Secrets shorter than this are not redacted (they would mangle ordinary text) and are refused by settings checks.
inline constexpr std::size_t kMinimumSecretLength = 8;

/// Replaces each known secret value, wherever it occurs, with kRedactedMarker. A value type: copy it freely.
class SecretRedactor {
public:
    /// Remembers a secret; values shorter than kMinimumSecretLength are ignored.
    void add(std::string secret);
    std::string redact(std::string_view text) const;
    bool empty() const { return secrets_.empty(); }

private:
    std::vector<std::string> secrets_; // longest first, so a secret containing another is replaced whole
};

/// The process-wide redactor: drivers register the secrets they read so that any log or error writer of the process
/// can pass text through redactRegisteredSecrets. Thread-safe.
void registerSecret(const std::string& secret);
std::string redactRegisteredSecrets(std::string_view text);

} // namespace mkb
