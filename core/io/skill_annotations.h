// Claim tags on a stored skill's text: listing a skill's annotations, tagging a byte range of it and deleting a tag,
// each through the store, so that a view holds the plain records only.
#pragma once

#include "core/records/store_records.h"
#include "core/records/trial.h"
#include "core/util/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mkb {

class Store;

/// What a reader tags in a skill: a range of its text in UTF-8 byte offsets, [rangeStart, rangeEnd), a tag and an
/// optional note.
struct ClaimTag {
    std::int64_t rangeStart = 0;
    std::int64_t rangeEnd = 0;
    AnnotationTag tag = AnnotationTag::Other;
    std::string note;
};

/// The annotations of one stored skill, ordered by where they start.
Result<std::vector<AnnotationRecord>> skillAnnotations(Store& store, std::int64_t skillId);

/// Stores claim as an annotation of skill, quoting the tagged text from skill.text; a range that is empty or outside
/// the text is refused before the store is touched. Returns the stored annotation, id included.
Result<AnnotationRecord> tagClaim(Store& store, const SkillRecord& skill, const ClaimTag& claim);

/// Deletes one annotation by id.
Status deleteClaimTag(Store& store, std::int64_t annotationId);

} // namespace mkb
