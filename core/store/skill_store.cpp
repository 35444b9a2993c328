// The store's skills (the SKILL.md an attempt wrote) and the annotations a reader attaches to them.
#include "core/store/store.h"

#include "core/store/store_impl.h"

#include <string>
#include <vector>

namespace mkb {

Result<std::optional<SkillRecord>> Store::skillOfTrial(std::int64_t trialId) {
    return impl_
        ->query("SELECT id, trial_id, text, sha256 FROM skills WHERE trial_id = ?",
                "loading the skill of trial #" + std::to_string(trialId))
        .bind(trialId)
        .firstRow([](const Statement& row) {
            return SkillRecord{row.int64(0), row.int64(1), row.text(2), row.text(3)};
        });
}

Result<std::int64_t> Store::addAnnotation(const AnnotationRecord& annotation) {
    const std::string operation = "saving an annotation of skill #" + std::to_string(annotation.skillId);
    if (annotation.rangeStart < 0 || annotation.rangeEnd < annotation.rangeStart) {
        return impl_->failure(operation, "bad character range " + std::to_string(annotation.rangeStart) + ".." +
                                             std::to_string(annotation.rangeEnd));
    }
    Query insert = impl_->query("INSERT INTO annotations (skill_id, range_start, range_end, quoted_text, tag, note, "
                                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                                operation);
    insert.bind(annotation.skillId, annotation.rangeStart, annotation.rangeEnd, annotation.quotedText,
                std::string(toString(annotation.tag)), annotation.note, orNow(annotation.createdAt));
    Result<std::int64_t> id = insert.returnedId();
    if (!id && insert.failedWith(SQLITE_CONSTRAINT_FOREIGNKEY)) {
        return impl_->failure(operation, "no such skill");
    }
    return id;
}

Result<std::vector<AnnotationRecord>> Store::annotations(std::int64_t skillId) {
    return impl_
        ->query("SELECT id, skill_id, range_start, range_end, quoted_text, tag, note, created_at "
                "FROM annotations WHERE skill_id = ? ORDER BY range_start, id",
                "loading the annotations of skill #" + std::to_string(skillId))
        .bind(skillId)
        .rows([](const Statement& row) {
            AnnotationRecord annotation;
            annotation.id = row.int64(0);
            annotation.skillId = row.int64(1);
            annotation.rangeStart = row.int64(2);
            annotation.rangeEnd = row.int64(3);
            annotation.quotedText = row.text(4);
            annotation.tag = annotationTagFromString(row.text(5)).value_or(AnnotationTag::Other);
            annotation.note = row.text(6);
            annotation.createdAt = row.text(7);
            return annotation;
        });
}

Status Store::deleteAnnotation(std::int64_t annotationId) {
    const std::string operation = "deleting annotation #" + std::to_string(annotationId);
    return impl_->runChangingRow(impl_->query("DELETE FROM annotations WHERE id = ?", operation).bind(annotationId),
                                 operation, "no such annotation");
}

} // namespace mkb
