// libcurl easy-interface POSTs with cancellation through the progress callback, and backoff between retries.
#include "core/agents/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace mkb {

namespace {

void initialiseCurlOnce() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
    const std::atomic<bool>* cancel = nullptr;
    std::string body;
    std::size_t maxBytes = 0;
    bool tooLarge = false;
    std::optional<double> retryAfterSeconds;
};

std::size_t collectBody(char* data, std::size_t size, std::size_t count, void* user) {
    auto* transfer = static_cast<Transfer*>(user);
    const std::size_t bytes = size * count;
    if (transfer->body.size() + bytes > transfer->maxBytes) {
        transfer->tooLarge = true;
        return 0; // aborts the transfer with CURLE_WRITE_ERROR
    }
    transfer->body.append(data, bytes);
    return bytes;
}

std::optional<double> parseRetryAfter(std::string value) {
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) {
        value.pop_back();
    }
    const std::size_t start = value.find_first_not_of(" \t");
    if (start == std::string::npos) {
        return std::nullopt;
    }
    value.erase(0, start);
    char* end = nullptr;
    const double seconds = std::strtod(value.c_str(), &end);
    if (end != value.c_str() && *end == '\0' && std::isfinite(seconds)) {
        return std::max(0.0, seconds);
    }
    const time_t when = curl_getdate(value.c_str(), nullptr);
    if (when < 0) {
        return std::nullopt;
    }
    return std::max(0.0, std::difftime(when, std::time(nullptr)));
}

std::size_t collectHeader(char* data, std::size_t size, std::size_t count, void* user) {
    auto* transfer = static_cast<Transfer*>(user);
    const std::size_t bytes = size * count;
    std::string line(data, bytes);
    const std::size_t colon = line.find(':');
    if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (name == "retry-after") {
            transfer->retryAfterSeconds = parseRetryAfter(line.substr(colon + 1));
        }
    }
    return bytes;
}

int checkCancel(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    const auto* transfer = static_cast<const Transfer*>(user);
    return transfer->cancel->load() ? 1 : 0;
}

HttpFailure classify(CURLcode code) {
    switch (code) {
    case CURLE_OK:
        return HttpFailure::None;
    case CURLE_OPERATION_TIMEDOUT:
        return HttpFailure::Timeout;
    case CURLE_ABORTED_BY_CALLBACK:
        return HttpFailure::Cancelled;
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return HttpFailure::Connection;
    default:
        return HttpFailure::Other;
    }
}

long milliseconds(double seconds) {
    return std::max(1L, static_cast<long>(std::ceil(seconds * 1000.0)));
}

std::string formatSeconds(double seconds) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f s", seconds);
    return buffer;
}

} // namespace

const char* toString(HttpFailure failure) {
    switch (failure) {
    case HttpFailure::None:
        return "none";
    case HttpFailure::Connection:
        return "connection error";
    case HttpFailure::Timeout:
        return "timeout";
    case HttpFailure::Cancelled:
        return "cancelled";
    case HttpFailure::TooLarge:
        return "response too large";
    case HttpFailure::Other:
        return "transfer error";
    }
    return "transfer error";
}

HttpResponse postHttp(const HttpRequest& request, const std::atomic<bool>& cancel) {
    initialiseCurlOnce();
    HttpResponse response;
    if (cancel.load()) {
        response.failure = HttpFailure::Cancelled;
        response.error = "cancelled before the request was sent";
        return response;
    }
    CURL* curl = curl_easy_init();
    if (!curl) {
        response.failure = HttpFailure::Other;
        response.error = "libcurl could not create a handle";
        return response;
    }
    Transfer transfer;
    transfer.cancel = &cancel;
    transfer.maxBytes = request.maxResponseBytes;
    char errorBuffer[CURL_ERROR_SIZE] = {};

    curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Expect:"); // no 100-continue round trip for large bodies
    for (const std::string& header : request.headers) {
        headers = curl_slist_append(headers, header.c_str());
    }
    curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, milliseconds(request.timeoutSeconds));
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                     milliseconds(std::min(request.connectTimeoutSeconds, request.timeoutSeconds)));
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collectBody);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, collectHeader);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, checkCancel);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &transfer);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errorBuffer);
    curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, ""); // whatever libcurl can decode
    // A local endpoint (vLLM, SGLang, Ollama) is never reached through a proxy; the user's NO_PROXY list still holds.
    const char* userNoProxy = std::getenv("NO_PROXY") ? std::getenv("NO_PROXY") : std::getenv("no_proxy");
    const std::string noProxy =
        (userNoProxy && *userNoProxy ? std::string(userNoProxy) + "," : std::string()) + "localhost,127.0.0.1,::1";
    curl_easy_setopt(curl, CURLOPT_NOPROXY, noProxy.c_str());

    const CURLcode code = curl_easy_perform(curl);
    response.failure = transfer.tooLarge ? HttpFailure::TooLarge : classify(code);
    if (response.failure == HttpFailure::None) {
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
        response.body = std::move(transfer.body);
        response.retryAfterSeconds = transfer.retryAfterSeconds;
    } else if (response.failure == HttpFailure::TooLarge) {
        response.error = "the response exceeded " + std::to_string(request.maxResponseBytes) + " bytes";
    } else {
        response.error = errorBuffer[0] ? std::string(errorBuffer) : std::string(curl_easy_strerror(code));
    }
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    return response;
}

bool isRetryable(const HttpResponse& response) {
    switch (response.failure) {
    case HttpFailure::Connection:
    case HttpFailure::Timeout:
        return true;
    case HttpFailure::None:
        return response.status == 408 || response.status == 429 || response.status >= 500;
    default:
        return false;
    }
}

double backoffSeconds(const RetryPolicy& policy, int retryIndex, std::optional<double> retryAfterSeconds) {
    if (retryAfterSeconds) {
        return std::max(0.0, *retryAfterSeconds);
    }
    const double computed = policy.initialBackoffSeconds * std::pow(2.0, std::min(retryIndex, 30));
    return std::clamp(computed, 0.0, std::max(0.0, policy.maxBackoffSeconds));
}

bool interruptibleWait(double seconds, const std::atomic<bool>& cancel) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                       std::chrono::duration<double>(std::max(0.0, seconds)));
    while (!cancel.load()) {
        const Clock::time_point now = Clock::now();
        if (now >= until) {
            return true;
        }
        const Clock::duration slice = std::chrono::milliseconds(50);
        std::this_thread::sleep_for(std::min(until - now, slice));
    }
    return false;
}

RetriedResponse postWithRetries(const HttpRequest& request, const RetryPolicy& policy, const std::atomic<bool>& cancel,
                                std::chrono::steady_clock::time_point deadline,
                                const std::function<void(const std::string&)>& log) {
    using Seconds = std::chrono::duration<double>;
    auto secondsLeft = [&] { return Seconds(deadline - std::chrono::steady_clock::now()).count(); };
    RetriedResponse outcome;
    for (int tryIndex = 0;; ++tryIndex) {
        if (secondsLeft() <= 0) {
            outcome.deadlinePassed = true;
            if (tryIndex == 0) {
                outcome.response.failure = HttpFailure::Timeout;
                outcome.response.error = "no time left for the request";
            }
            return outcome;
        }
        HttpRequest bounded = request;
        bounded.timeoutSeconds = std::min(request.timeoutSeconds, secondsLeft());
        outcome.response = postHttp(bounded, cancel);
        if (outcome.response.failure == HttpFailure::Timeout && secondsLeft() <= 0.05) {
            outcome.deadlinePassed = true;
            return outcome;
        }
        if (!isRetryable(outcome.response) || tryIndex >= policy.maxRetries) {
            return outcome;
        }
        const double wait = backoffSeconds(policy, tryIndex, outcome.response.retryAfterSeconds);
        const std::string why =
            outcome.response.failure == HttpFailure::None
                ? "HTTP " + std::to_string(outcome.response.status)
                : std::string(toString(outcome.response.failure)) + " (" + outcome.response.error + ")";
        if (wait >= secondsLeft()) {
            log("not retrying after " + why + ": the wait of " + formatSeconds(wait) +
                " would pass the attempt's deadline");
            outcome.deadlinePassed = true;
            return outcome;
        }
        log("retry " + std::to_string(tryIndex + 1) + " of " + std::to_string(policy.maxRetries) + " after " + why +
            "; waiting " + formatSeconds(wait) + (outcome.response.retryAfterSeconds ? " (Retry-After)" : ""));
        if (!interruptibleWait(wait, cancel)) {
            outcome.response.failure = HttpFailure::Cancelled;
            outcome.response.error = "cancelled while waiting to retry";
            return outcome;
        }
        ++outcome.retries;
    }
}

} // namespace mkb
