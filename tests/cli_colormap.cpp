// The figures' colour tables, for the CLI tests that read a rendered cell's
// colour back and compare it with the colormap entry of its weight.
// attn_cli_tests does not link attn_widgets (tests/CMakeLists.txt), so the
// one GUI-free source file the comparison needs is compiled in here.
#include "widgets/colormap.cpp"
