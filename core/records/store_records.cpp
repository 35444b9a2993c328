// Names of annotation tags as stored and printed.
#include "core/records/store_records.h"

namespace mkb {

const char* toString(AnnotationTag tag) {
    switch (tag) {
    case AnnotationTag::Supported:
        return "supported";
    case AnnotationTag::Unsupported:
        return "unsupported";
    case AnnotationTag::Contradicted:
        return "contradicted";
    case AnnotationTag::Other:
        return "other";
    }
    return "other";
}

std::optional<AnnotationTag> annotationTagFromString(const std::string& text) {
    for (AnnotationTag tag :
         {AnnotationTag::Supported, AnnotationTag::Unsupported, AnnotationTag::Contradicted, AnnotationTag::Other}) {
        if (text == toString(tag)) {
            return tag;
        }
    }
    return std::nullopt;
}

} // namespace mkb
