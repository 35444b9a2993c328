// HTTP for the chat driver: one cancellable JSON POST over libcurl, and the retry loop with exponential backoff.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

struct HttpRequest {
    std::string url;
    std::vector<std::string> headers; // "Name: value"; Content-Type: application/json is always sent
    std::string body;
    double timeoutSeconds = 600;       // the whole request, connection included
    double connectTimeoutSeconds = 30; // capped by timeoutSeconds
    std::size_t maxResponseBytes = 64u << 20;
};

/// Why no HTTP status came back (None when one did, whatever it was).
enum class HttpFailure { None, Connection, Timeout, Cancelled, TooLarge, Other };

const char* toString(HttpFailure failure);

struct HttpResponse {
    HttpFailure failure = HttpFailure::None;
    std::string error; // libcurl's words when failure != None
    long status = 0;
    std::string body;
    std::optional<double> retryAfterSeconds; // from a Retry-After header (seconds or an HTTP date)
};

/// One POST. Returns soon after cancel becomes true (failure Cancelled) and never blocks past the timeout.
HttpResponse postHttp(const HttpRequest& request, const std::atomic<bool>& cancel);

struct RetryPolicy {
    int maxRetries = 5;               // retries after the first try
    double initialBackoffSeconds = 2; // the first wait; doubled after each retry
    double maxBackoffSeconds = 60;    // no computed wait is longer (a server's Retry-After is honoured as given)
};

/// True for what is worth another try: connection errors, timeouts, 408, 429 and 5xx.
bool isRetryable(const HttpResponse& response);

/// The wait before retry number retryIndex (0 = the first retry): Retry-After when the server sent one,
/// else min(maxBackoff, initialBackoff × 2^retryIndex).
double backoffSeconds(const RetryPolicy& policy, int retryIndex, std::optional<double> retryAfterSeconds);

/// Waits up to seconds, in small slices; false when cancel became true first.
bool interruptibleWait(double seconds, const std::atomic<bool>& cancel);

/// What postWithRetries came to.
struct RetriedResponse {
    HttpResponse response; // the last try's
    int retries = 0;       // tries after the first
    bool deadlinePassed = false;
};

/// Posts, retrying what isRetryable allows under policy. Each try's timeout and each wait are cut to the deadline; a
/// retry that could not start before the deadline is not made. log receives one line per retry (the caller redacts).
RetriedResponse postWithRetries(const HttpRequest& request, const RetryPolicy& policy, const std::atomic<bool>& cancel,
                                std::chrono::steady_clock::time_point deadline,
                                const std::function<void(const std::string&)>& log);

} // namespace mkb
