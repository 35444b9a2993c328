// Registration of the compiled-in resources (resources/mkb.qrc) that live in the static libmkbgui.
#pragma once

namespace mkb::gui {

/// Makes ":/mkb/..." available; safe to call more than once.
void initResources();

} // namespace mkb::gui
