// Temporary translation unit so libmkbgui links while the shell is being written.
namespace mkb::gui {
int placeholderWindow() { return 0; }
} // namespace mkb::gui
