// Claim tags through the store: the range is checked against the skill's text and the tagged text quoted here, once,
// for every caller (the inspector, tests, a future CLI verb).
#include "core/io/skill_annotations.h"

#include "core/store/store.h"

namespace mkb {

Result<std::vector<AnnotationRecord>> skillAnnotations(Store& store, std::int64_t skillId) {
    return store.annotations(skillId);
}

Result<AnnotationRecord> tagClaim(Store& store, const SkillRecord& skill, const ClaimTag& claim) {
    const auto size = std::int64_t(skill.text.size());
    if (claim.rangeStart < 0 || claim.rangeEnd <= claim.rangeStart || claim.rangeEnd > size) {
        return makeError("tagging a claim in skill #" + std::to_string(skill.id) + ": the range " +
                         std::to_string(claim.rangeStart) + ".." + std::to_string(claim.rangeEnd) +
                         " is not a non-empty part of its " + std::to_string(size) +
                         " bytes of text; select the claim in the skill text first");
    }
    AnnotationRecord annotation;
    annotation.skillId = skill.id;
    annotation.rangeStart = claim.rangeStart;
    annotation.rangeEnd = claim.rangeEnd;
    annotation.quotedText =
        skill.text.substr(std::size_t(claim.rangeStart), std::size_t(claim.rangeEnd - claim.rangeStart));
    annotation.tag = claim.tag;
    annotation.note = claim.note;
    Result<std::int64_t> id = store.addAnnotation(annotation);
    if (!id) {
        return id.error();
    }
    annotation.id = *id;
    return annotation;
}

Status deleteClaimTag(Store& store, std::int64_t annotationId) {
    return store.deleteAnnotation(annotationId);
}

} // namespace mkb
