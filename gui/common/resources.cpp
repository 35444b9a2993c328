// Q_INIT_RESOURCE must run at global scope (it declares the rcc function there), so the registration lives in a
// file-level static function.
#include "gui/common/resources.h"

#include <QtGlobal>

static void initMkbResource() {
    Q_INIT_RESOURCE(mkb);
}

namespace mkb::gui {

void initResources() {
    static const bool initialised = (initMkbResource(), true);
    Q_UNUSED(initialised);
}

} // namespace mkb::gui
