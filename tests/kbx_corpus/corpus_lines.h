// Corpus lines built from parts for the corpus import tests (raw strings kept out of the test file: moc misreads
// some of them and then finds no test class).
#pragma once

#include <string>

namespace kbxtest {

inline std::string sideJson(const std::string& callOk, const std::string& exeOk, const std::string& speedup,
                            const std::string& error) {
    return R"({"call_ok": )" + callOk + R"(, "exe_ok": )" + exeOk + R"(, "perf_ok": )" + exeOk +
           R"(, "dtype": "", "runtime_ms": null, "gbs": null, "tflops": null, "speedup": )" + speedup +
           R"(, "maintainability": "N/A", "error": ")" + error + R"("})";
}

inline std::string recordLine(const std::string& before, const std::string& after) {
    return R"({"task_id": "Math/exp.py", "from_round": "round_0", "to_round": "round_1", "kind": "call_fail_to_pass",)"
           R"( "before": )" +
           before + R"(, "after": )" + after +
           ", \"before_code\": \"def exp(x): return x\", \"after_code\": \"def exp(x): return x.exp()\"}";
}

} // namespace kbxtest
