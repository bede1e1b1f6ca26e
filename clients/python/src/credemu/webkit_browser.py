"""A small WebKitGTK browser that WebKitWebDriver launches instead of MiniBrowser (run with Debian's python3, which
has PyGObject: gir1.2-webkit2-4.1, python3-gi-cairo).

WebKitGTK's WebDriver has no preload-script command (no BiDi), so this browser adds the scripts itself: every
`*.js` file in the directory given as `--scripts DIR` is a document-start `WebKitUserScript` for all frames of
every automation web view, re-read before each top-level navigation (so a launcher can add and remove them
between page loads). Usage: python3 webkit_browser.py --scripts DIR --name NAME --automation
"""
import os
import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("WebKit2", "4.1")
from gi.repository import GLib, Gtk, WebKit2  # noqa: E402


def main(argv):
    scripts = argv[argv.index("--scripts") + 1]
    name = argv[argv.index("--name") + 1] if "--name" in argv else "credemu-webkit"
    GLib.set_prgname(name)
    context = WebKit2.WebContext.get_default()
    context.set_automation_allowed(True)
    manager = WebKit2.UserContentManager()
    seen = [None]
    windows = []

    def load_scripts():
        files = sorted(f for f in os.listdir(scripts) if f.endswith(".js"))
        state = [(f, os.stat(os.path.join(scripts, f)).st_mtime_ns) for f in files]
        if state == seen[0]:
            return
        seen[0] = state
        manager.remove_all_scripts()
        for f in files:
            with open(os.path.join(scripts, f), encoding="utf-8") as source:
                manager.add_script(WebKit2.UserScript.new(source.read(), WebKit2.UserContentInjectedFrames.ALL_FRAMES,
                                                          WebKit2.UserScriptInjectionTime.START, None, None))

    def decide(view, decision, kind):
        if kind == WebKit2.PolicyDecisionType.NAVIGATION_ACTION:
            load_scripts()
        return False

    def create_view(session):
        load_scripts()
        view = WebKit2.WebView(web_context=context, user_content_manager=manager, is_controlled_by_automation=True)
        view.connect("decide-policy", decide)
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
