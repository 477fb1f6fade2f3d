// Qt's own notices (XDG_RUNTIME_DIR, font fallbacks, xcb chatter) are not
// the user's business and would break the one-line error contract on the
// command line. Errors are reported by attnlab itself.
#pragma once

namespace attn {

// Installs a Qt message handler that drops everything but fatal messages;
// ATTNLAB_QT_DEBUG=1 in the environment shows them all (prefixed "qt: ").
void quietQtMessages();

}  // namespace attn
