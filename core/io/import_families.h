// The families an import files problems under when a results.json does not say (`mkb import --problems DIR`): each
// problem of the named suites by its "NN_slug".
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace mkb {

/// "01_mha_prefill" → "attention" for every valid problem of the suites (malformed files are left out), as
/// ImportOptions::familyByProblem takes it.
std::map<std::string, std::string> familiesByProblem(const std::vector<std::filesystem::path>& suiteRoots);

} // namespace mkb
