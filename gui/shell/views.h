// The workbench's views as one table: their order in the switcher, their icons, titles and what each shows.
#pragma once

#include <QString>

namespace mkb::gui {

/// The views, in switcher order; Ctrl+1..6 select them.
enum class View { Overview, Transfers, Comparisons, Charts, Runs, Problems };
inline constexpr int kViewCount = 6;

struct ViewDescription {
    const char* icon;      // resource path
    const char* title;     // untranslated; viewTitle translates it
    const char* purpose;   // what the view shows (its switcher tooltip), untranslated
    const char* layoutKey; // the settings key of its saved layout (splitters, tabs, table header)
    const char* headerKey; // the settings key of its table header, for views whose layout keeps it apart ("" = none)
};

const ViewDescription& describe(View view);
QString viewTitle(View view);
QString viewPurpose(View view);

} // namespace mkb::gui
