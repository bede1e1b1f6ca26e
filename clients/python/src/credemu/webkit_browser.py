"""A small WebKitGTK browser that WebKitWebDriver launches instead of MiniBrowser (run with Debian's python3, which
has PyGObject: gir1.2-webkit2-4.1, python3-gi-cairo).

WebKitGTK's WebDriver has no preload-script command (no BiDi), so this browser adds the scripts itself: every
`*.js` file in the directory given as `--scripts DIR` is a document-start `WebKitUserScript` for all frames of
every automation web view, re-read before each top-level navigation (so a launcher can add and remove them
between page loads). Usage: python3 webkit_browser.py --scripts DIR --name NAME --automation

Every `*.channel` file there (JSON `{"name", "socket"}`, written by `credemu.browsers.WebKit.add_channel`) is the
shim's channel (docs/shim.md, "Transport"): a script message handler with reply of that name on each web view's
own content manager, and a document-start script for the top frame only that puts a function of that name on
`window` (which the shim takes off before the page's scripts run) answering the handler's promise. Each message is
sent, one JSON line `{"id", "channel", "url", "message"}`, to the launcher's Unix socket, `url` the URI of the
view's committed top-level document as WebKit reports it (`load-changed` COMMITTED), never anything the page
wrote; the launcher's relay answers `{"id", "reply"}`, which goes back as the promise's value. WebKitGTK tells a
message handler nothing of the frame that posted, so the channel is in the top frame only: a subframe's shim
finds no channel and uses its page's fetch.
"""
import json
import os
import socket
import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("WebKit2", "4.1")
gi.require_version("JavaScriptCore", "4.1")
from gi.repository import GLib, Gtk, JavaScriptCore, WebKit2  # noqa: E402

# The top frame's side of a channel: the handler's postMessage, taken now, behind a function of the channel's name.
CHANNEL_SCRIPT = """(function () {
  const handlers = window.webkit && window.webkit.messageHandlers;
  const handler = handlers && handlers[NAME];
  if (!handler) return;
  const post = handler.postMessage.bind(handler);
  Object.defineProperty(window, NAME, { configurable: true, writable: true, value: function (message) {
    if (typeof message !== 'string') throw new TypeError('credemu: the channel carries JSON text');
    return post(message);
  } });
})();"""


class Channels:
    """The launcher's sockets, one connection each, and the replies waiting for their answer."""

    def __init__(self):
        self.connections = {}   # socket path -> (socket, read buffer)
        self.waiting = {}       # message id -> (WebKitScriptMessageReply, JSCContext)
        self.ids = 0

    def send(self, path, channel, url, value, reply):
        self.ids += 1
        ident = self.ids
        try:
            connection = self.connection(path)
            line = json.dumps({"id": ident, "channel": channel, "url": url, "message": value.to_string()}) + "\n"
            connection.sendall(line.encode())
        except OSError as error:
            self.drop(path)
            reply.return_error_message(f"credemu: the driver's channel is gone ({error})")
            return
        self.waiting[ident] = (reply, value.get_context())

    def connection(self, path):
        if path not in self.connections:
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            connection.connect(path)
            self.connections[path] = [connection, b""]
            GLib.io_add_watch(connection.fileno(), GLib.PRIORITY_DEFAULT, GLib.IO_IN | GLib.IO_HUP | GLib.IO_ERR,
                              lambda fd, condition: self.readable(path))
        return self.connections[path][0]

    def readable(self, path):
        entry = self.connections.get(path)
        if entry is None:
            return False
        try:
            data = entry[0].recv(1 << 20)
        except OSError:
            data = b""
        if not data:
            self.drop(path)
            return False
        entry[1] += data
        while b"\n" in entry[1]:
            line, entry[1] = entry[1].split(b"\n", 1)
            try:
                answer = json.loads(line)
                reply, context = self.waiting.pop(answer["id"])
            except (ValueError, KeyError, TypeError):
                continue
            reply.return_value(JavaScriptCore.Value.new_from_json(context, json.dumps(answer.get("reply"))))
        return True

    def drop(self, path):
        entry = self.connections.pop(path, None)
        if entry is not None:
            entry[0].close()
        # The launcher is gone: no answer comes for what waits (one launcher a browser, so all of it).
        waiting, self.waiting = self.waiting, {}
        for reply, _ in waiting.values():
            reply.return_error_message("credemu: the driver's channel is gone")


def main(argv):
    scripts = argv[argv.index("--scripts") + 1]
    name = argv[argv.index("--name") + 1] if "--name" in argv else "credemu-webkit"
    GLib.set_prgname(name)
    context = WebKit2.WebContext.get_default()
    context.set_automation_allowed(True)
    channels = Channels()
    seen = [None]
    entries = []            # (kind, source or channel) in file order
    views = []              # [view, its content manager, its registered channel names, committed URI]
    windows = []

    def read_entries():
        files = sorted(f for f in os.listdir(scripts) if f.endswith((".js", ".channel")))
        state = [(f, os.stat(os.path.join(scripts, f)).st_mtime_ns) for f in files]
        if state == seen[0]:
            return False
        seen[0] = state
        entries.clear()
        for f in files:
            with open(os.path.join(scripts, f), encoding="utf-8") as source:
                text = source.read()
            entries.append(("channel", json.loads(text)) if f.endswith(".channel") else ("script", text))
        return True

    def apply(entry):
        view, manager, registered = entry[0], entry[1], entry[2]
        manager.remove_all_scripts()
        wanted = {c["name"]: c for kind, c in entries if kind == "channel"}
        for channel in list(registered):
            if channel not in wanted:
                manager.unregister_script_message_handler(channel)
                registered.discard(channel)
        for kind, item in entries:
            if kind == "script":
                manager.add_script(WebKit2.UserScript.new(item, WebKit2.UserContentInjectedFrames.ALL_FRAMES,
                                                          WebKit2.UserScriptInjectionTime.START, None, None))
                continue
            if item["name"] not in registered:
                manager.register_script_message_handler_with_reply(item["name"], None)
                manager.connect("script-message-with-reply-received::" + item["name"], received, entry, item)
                registered.add(item["name"])
            manager.add_script(WebKit2.UserScript.new(CHANNEL_SCRIPT.replace("NAME", json.dumps(item["name"])),
                                                      WebKit2.UserContentInjectedFrames.TOP_FRAME,
                                                      WebKit2.UserScriptInjectionTime.START, None, None))

    def received(manager, value, reply, entry, channel):
        if channel["name"] not in entry[2]:
            reply.return_error_message("credemu: the channel was removed")
            return True
        channels.send(channel["socket"], channel["name"], entry[3], value, reply)
        return True

    def load_scripts():
        if read_entries():
            for entry in views:
                apply(entry)

    def decide(view, decision, kind):
        if kind == WebKit2.PolicyDecisionType.NAVIGATION_ACTION:
            load_scripts()
        return False

    def load_changed(view, event, entry):
        # The top-level document's URI once WebKit commits it: the origin a channel's messages come from.
        if event == WebKit2.LoadEvent.COMMITTED:
            entry[3] = view.get_uri()

    def create_view(session):
        read_entries()
        manager = WebKit2.UserContentManager()
        view = WebKit2.WebView(web_context=context, user_content_manager=manager, is_controlled_by_automation=True)
        entry = [view, manager, set(), None]
        views.append(entry)
        apply(entry)
        view.connect("decide-policy", decide)
        view.connect("load-changed", load_changed, entry)
        window = Gtk.Window()
        window.set_default_size(1000, 800)
        window.add(view)
        window.show_all()
        windows.append(window)
        return view

    def started(ctx, session):
        info = WebKit2.ApplicationInfo.new()
        info.set_name(name)
        info.set_version(1, 0, 0)
        session.set_application_info(info)
        session.connect("create-web-view", create_view)

    context.connect("automation-started", started)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, 15, Gtk.main_quit)
    Gtk.main()


if __name__ == "__main__":
    Gtk.init(None)
    main(sys.argv)
