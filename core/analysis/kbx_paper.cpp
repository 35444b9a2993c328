// The paper's findings from the attempts: shares and geometric means with seeded bootstrap intervals, η² with its own.
#include "core/analysis/kbx_paper.h"

#include "core/analysis/variance.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

namespace mkb::analysis {
namespace {

constexpr double kSlowerThanEager = 1.0;

/// A share of 0/1 indicators with its interval.
PaperFinding shareFinding(std::string finding, const std::vector<double>& indicators, std::string basis,
                          std::string paper) {
    PaperFinding result;
    result.finding = std::move(finding);
    result.unit = FindingUnit::Share;
    result.n = indicators.size();
    result.basis = std::move(basis);
    result.paper = std::move(paper);
    if (indicators.empty()) {
        result.note = "the data holds none";
    } else {
        result.value = mean(indicators);
        std::vector<std::vector<double>> items;
        for (double value : indicators) {
            items.push_back({value});
        }
        result.interval = meanBootstrapCis(items, 1)[0];
    }
    return result;
}

/// A geometric mean of positive speedups with its interval.
PaperFinding speedupFinding(std::string finding, const std::vector<double>& speedups, std::string basis,
                            std::string paper) {
    PaperFinding result;
    result.finding = std::move(finding);
    result.unit = FindingUnit::Speedup;
    result.n = speedups.size();
    result.basis = std::move(basis);
    result.paper = std::move(paper);
    result.value = geometricMean(speedups);
    if (speedups.empty()) {
        result.note = "the data holds none";
    }
    if (speedups.size() >= 2) {
        result.interval = geometricMeanBootstrapCi(speedups);
    }
    return result;
}

std::string roundName(int index) {
    return "round " + std::to_string(index - 1);
}

} // namespace

EtaSquaredEstimate etaSquaredWithInterval(const std::vector<double>& values, const std::vector<std::string>& groups) {
    EtaSquaredEstimate estimate;
    estimate.value = etaSquared(values, groups);
    if (!estimate.value || values.size() < 2) {
        return estimate;
    }
    // Seeded from the items, sorted, so that the same items in any order give the same interval.
    std::vector<std::pair<std::string, double>> items;
    for (std::size_t i = 0; i < values.size(); ++i) {
        items.emplace_back(groups[i], values[i]);
    }
    std::sort(items.begin(), items.end());
    std::uint64_t seed = 1469598103934665603ULL;
    for (const auto& [group, value] : items) {
        for (char c : group) {
            seed = (seed ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
        }
        seed = (seed ^ static_cast<std::uint64_t>(value * 1000003.0)) * 1099511628211ULL;
    }
    std::mt19937_64 generator(seed);
    std::uniform_int_distribution<std::size_t> pick(0, items.size() - 1);
    std::vector<double> draws;
    std::vector<double> sampleValues(items.size());
    std::vector<std::string> sampleGroups(items.size());
    for (int resample = 0; resample < kBootstrapResamples; ++resample) {
        for (std::size_t i = 0; i < items.size(); ++i) {
            const auto& item = items[pick(generator)];
            sampleGroups[i] = item.first;
            sampleValues[i] = item.second;
        }
        // A resample whose values are all equal has no variance to explain: it counts as 0.
        draws.push_back(etaSquared(sampleValues, sampleGroups).value_or(0.0));
    }
    std::sort(draws.begin(), draws.end());
    const double tail = (1.0 - kBootstrapConfidence) / 2.0;
    const auto at = [&draws](double q) {
        const double position = q * static_cast<double>(draws.size() - 1);
        const auto below = static_cast<std::size_t>(std::floor(position));
        const std::size_t above = std::min(below + 1, draws.size() - 1);
        return draws[below] + (position - static_cast<double>(below)) * (draws[above] - draws[below]);
    };
    estimate.interval = Interval{at(tail), at(1.0 - tail)};
    return estimate;
}

std::vector<PaperFinding> kbxPaperFindings(const AttemptSet& attempts) {
    std::vector<PaperFinding> findings;

    // η² of correctness by category and by method (model), over graded attempts.
    std::vector<double> correct;
    std::vector<std::string> categories;
    std::vector<std::string> models;
    for (const Attempt& attempt : attempts) {
        if (!attempt.graded) {
            continue;
        }
        correct.push_back(attempt.correct ? 1.0 : 0.0);
        categories.push_back(attempt.category.empty() ? "uncategorised" : attempt.category);
        models.push_back(attempt.model);
    }
    const std::set<std::string> distinctModels(models.begin(), models.end());
    for (const bool byCategory : {true, false}) {
        PaperFinding finding;
        finding.finding = byCategory ? "η² of correctness by category" : "η² of correctness by method";
        finding.unit = FindingUnit::EtaSquared;
        finding.n = correct.size();
        finding.basis = "graded attempts (each one's final verdict)";
        finding.paper = byCategory ? "9.4%" : "3.3%";
        if (!byCategory && distinctModels.size() < 2) {
            finding.note = "needs attempts of two or more methods (models); the data holds " +
                           std::to_string(distinctModels.size());
        } else {
            const EtaSquaredEstimate estimate = etaSquaredWithInterval(correct, byCategory ? categories : models);
            finding.value = estimate.value;
            finding.interval = estimate.interval;
            if (byCategory && std::count(categories.begin(), categories.end(), "uncategorised") > 0) {
                finding.note = "attempts without a category form one group, uncategorised";
            }
        }
        findings.push_back(std::move(finding));
    }

    // Failure share of fusion tasks, correct kernels among quantization tasks.
    std::vector<double> fusionFailed;
    std::vector<double> quantizationCorrect;
    for (const Attempt& attempt : attempts) {
        if (!attempt.graded) {
            continue;
        }
        if (attempt.category == "Fusion") {
            fusionFailed.push_back(attempt.correct ? 0.0 : 1.0);
        } else if (attempt.category == "Quantization") {
            quantizationCorrect.push_back(attempt.correct ? 1.0 : 0.0);
        }
    }
    findings.push_back(shareFinding("Fusion tasks failing", fusionFailed, "graded Fusion attempts", "72%"));
    findings.push_back(
        shareFinding("Quantization tasks correct", quantizationCorrect, "graded Quantization attempts", "0 of 30"));

    // The refinement trade-off per round: compile and correct rates, and the speedup of the kernels that passed.
    std::map<int, std::vector<double>> compiled;
    std::map<int, std::vector<double>> correctByRound;
    std::map<int, std::vector<double>> speedups;
    for (const Attempt& attempt : attempts) {
        for (const SubmissionPoint& submission : attempt.submissions) {
            compiled[submission.index].push_back(submission.compiled ? 1.0 : 0.0);
            correctByRound[submission.index].push_back(submission.correct ? 1.0 : 0.0);
            if (submission.correct && submission.speedup > 0) {
                speedups[submission.index].push_back(submission.speedup);
            }
        }
    }
    const int first = compiled.empty() ? 0 : compiled.begin()->first;
    const int last = compiled.empty() ? 0 : compiled.rbegin()->first;
    // The paper gives each rate for its first and last round only.
    const auto paperAt = [&](int index, const char* atFirst, const char* atLast) {
        return index == first  ? std::string(atFirst) + " (first round)"
               : index == last ? std::string(atLast) + " (last round)"
                               : std::string();
    };
    for (const auto& [index, values] : compiled) {
        findings.push_back(shareFinding("compile rate, " + roundName(index), values,
                                        "attempts with a " + roundName(index), paperAt(index, "52.3%", "68.8%")));
    }
    for (const auto& [index, values] : correctByRound) {
        findings.push_back(shareFinding("correct rate, " + roundName(index), values,
                                        "attempts with a " + roundName(index), paperAt(index, "18.2%", "30.7%")));
    }
    for (const auto& [index, values] : compiled) {
        PaperFinding finding =
            speedupFinding("GM speedup of passing kernels, " + roundName(index), speedups[index],
                           "passing, timed kernels of " + roundName(index), paperAt(index, "1.58×", "1.44×"));
        finding.note = "the paper gives mean speedups; this is the geometric mean";
        findings.push_back(std::move(finding));
    }

    // Rescued against correct from the start: speedups of the final verdicts that passed.
    std::vector<double> fromStart;
    std::vector<double> rescued;
    std::vector<double> slower;
    for (const Attempt& attempt : attempts) {
        if (attempt.graded && attempt.correct && attempt.speedup > 0) {
            slower.push_back(attempt.speedup < kSlowerThanEager ? 1.0 : 0.0);
        }
        if (attempt.submissions.empty() || !attempt.passed || attempt.speedup <= 0) {
            continue;
        }
        (attempt.submissions.front().correct ? fromStart : rescued).push_back(attempt.speedup);
    }
    findings.push_back(speedupFinding("GM speedup, correct from the start", fromStart,
                                      "passing final kernels whose first round was correct", "1.58×"));
    findings.push_back(
        speedupFinding("GM speedup, rescued", rescued, "passing final kernels whose first round failed", "1.16×"));
    findings.push_back(
        shareFinding("correct kernels slower than eager", slower, "correct, timed final kernels", "46.6%"));

    PaperFinding portability;
    portability.finding = "max/min speedup of one kernel across GPUs";
    portability.unit = FindingUnit::Speedup;
    portability.basis = "kernels graded on several GPUs";
    portability.paper = "up to 21.4× across 6 GPUs";
    portability.note = "needs each kernel graded on several GPUs (mkb report --metrics portability reads the devices "
                       "of the store's submissions); KernelBench-X's golden eager timings are not kernel gradings";
    findings.push_back(std::move(portability));
    return findings;
}

} // namespace mkb::analysis
