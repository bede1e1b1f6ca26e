"""What a page sees when the shim fills a saved password, in Debian's Chromium through Playwright (issue 24.9).

Chrome's own autofill sets the fields and fires trusted `input` and `change` events; it never tells the page it
was a password manager. The shim keeps its own `credemu:autofilled` event out of the page unless the debug switch
asks for it, and, installed by the client in Playwright, fills through the driver (`keyboard.insert_text`, CDP
`Input.insertText`), so the events are trusted. No driver reaches the browser's autofill state, so the field
never matches `:autofill`: measured here, so the day that changes the test says so.
"""
import pytest

from conftest import html_site

PAGE = b"""<!doctype html><title>sign in</title>
<form id="f" action="/done" method="post">
  <input name="username" autocomplete="username"><input name="password" type="password" autocomplete="current-password">
</form>
<script>
  window.seen = { events: [], credemu: [], globals: [] };
  for (const type of ['input', 'change']) {
    document.addEventListener(type, (e) => window.seen.events.push([type, e.target.name, e.isTrusted]), true);
  }
  document.addEventListener('credemu:autofilled', (e) => window.seen.credemu.push(e.detail), true);
  window.seen.globals = Object.getOwnPropertyNames(window).filter((n) => n.toLowerCase().includes('credemu') && n !== '__credemuShim');
  window.matchesAutofill = () => {
    const field = document.querySelector('input[name=password]');
    const matches = (selector) => { try { return field.matches(selector); } catch (e) { return 'unsupported'; } };
    return { autofill: matches(':autofill'), webkit: matches(':-webkit-autofill') };
  };
</script>"""


def filled_page(browser, profile, install, **options):
    """Opens the sign-in page with a saved password for alice, the shim installed with `options`, and submits the
    filled form; the page's record."""
    with html_site(PAGE) as origin:
        profile.save_password("alice", "correct horse", origin=origin)
        context = install(browser, origin=origin, **options)
        page = context.new_page()
        page.goto(origin + "/signin")
        page.wait_for_function("document.querySelector('input[name=password]').value !== ''", timeout=10000)
        page.wait_for_timeout(200)   # the blur's change event, after the last insert
        record = page.evaluate("({...window.seen, values: [...document.querySelectorAll('input')].map((i) => i.value),"
                               " autofill: window.matchesAutofill()})")
        page.evaluate("document.getElementById('f').requestSubmit()")
        page.wait_for_timeout(300)
        record["passwordEvents"] = [e["outcome"] for e in profile.events("password")]
        context.close()
        return record


def test_a_fill_through_the_driver_gives_trusted_events_and_no_event_of_credemus(playwright_browser, credemu_profile, credemu_install_shim):
    record = filled_page(playwright_browser, credemu_profile, credemu_install_shim)
    assert record["values"] == ["alice", "correct horse"]
    assert record["passwordEvents"][-1] == "used", "the submitted fill counts as the password's use, as a script fill does"
    assert record["credemu"] == [], "no credemu:autofilled without the debug switch"
    assert record["globals"] == [], "the driver's binding was taken off window before the page's scripts ran"
    # The driver's text insertion: trusted input for each field, and a trusted change as each loses focus.
    assert ["input", "username", True] in record["events"] and ["input", "password", True] in record["events"], record["events"]
    assert ["change", "username", True] in record["events"] and ["change", "password", True] in record["events"], record["events"]
    assert all(trusted for _, _, trusted in record["events"]), record["events"]
    # Only Chrome's own autofill sets the state; measured in Debian's Chromium: the driver cannot.
    assert record["autofill"] == {"autofill": False, "webkit": False}


def test_the_debug_switch_adds_credemus_own_event(playwright_browser, credemu_profile, credemu_install_shim):
    record = filled_page(playwright_browser, credemu_profile, credemu_install_shim, autofill_events=True)
    assert record["credemu"] == [{"username": "alice"}]


def test_a_shim_with_no_binding_fills_by_script_with_untrusted_events_and_no_event_of_its_own(playwright_browser, credemu_profile):
    """A shim loaded without the client (a page fetching /shim.js itself, Selenium's CDP commands): the value is set
    and the events are the script's own, untrusted; still no credemu event."""
    with html_site(PAGE) as origin:
        credemu_profile.allow_origin(origin)
        credemu_profile.save_password("alice", "correct horse", origin=origin)
        context = playwright_browser.new_context(bypass_csp=True)
        context.add_init_script(script=credemu_profile.shim())
        page = context.new_page()
        page.goto(origin + "/signin")
        page.wait_for_function("document.querySelector('input[name=password]').value !== ''", timeout=10000)
        record = page.evaluate("window.seen")
        context.close()
    assert record["credemu"] == []
    assert sorted(record["events"]) == [["change", "password", False], ["change", "username", False],
                                        ["input", "password", False], ["input", "username", False]]


def test_a_binding_name_that_is_not_an_identifier_is_refused(credemu_profile):
    from credemu import CredemuError
    with pytest.raises(CredemuError) as raised:
        credemu_profile.shim(fill_binding="a-b;alert(1)")
    assert raised.value.status == 400


@pytest.mark.parametrize("engine", ["chromium", "firefox"])
def test_credemu_browsers_type_the_fill_as_the_browsers_own_input(engine, credemu_profile, credemu_install_shim):
    """`credemu.browsers`: Chromium types through CDP `Input.insertText`, Firefox through BiDi `input.performActions`
    key actions; either way every event the page sees is trusted, and nothing of credemu's reaches it."""
    from credemu import browsers
    with html_site(PAGE) as origin, browsers.launch(engine) as browser:
        credemu_profile.save_password("alice", "correct horse", origin=origin)
        credemu_install_shim(browser, origin=origin)
        browser.navigate(origin + "/signin")
        browser.wait_for("document.querySelector('input[name=password]').value === 'correct horse'")
        browser.wait_for("document.activeElement === document.body")   # the shim's blur, after the last key
        browser.evaluate("new Promise((r) => setTimeout(() => r(true), 100))")
        record = browser.evaluate("window.seen")
    assert record["credemu"] == [] and record["globals"] == []
    assert ["input", "username", True] in record["events"] and ["input", "password", True] in record["events"], record["events"]
    assert all(trusted for _, _, trusted in record["events"]), record["events"]
    # Chromium fires a trusted change as the shim blurs the field; headless Firefox fires none on that blur (measured).
    assert (["change", "password", True] in record["events"]) == (engine == "chromium"), record["events"]
