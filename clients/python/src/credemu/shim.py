"""The browser shim in a Selenium driver or a Playwright page or context (sync API), before the page's scripts.

The page's own Content-Security-Policy applies to the shim's `fetch` to credemu as to any of the page's
scripts, so a page with `default-src 'self'` would block it: the shim is installed with CSP bypassed (CDP
`Page.setBypassCSP`), and the page's origin is allowed on the server (`POST /origins`), since the shim's
requests come from the page.
"""
import warnings

from .client import origin_of


def install_shim(target, client, *, origin=None, profile=None, autofill=True, bypass_csp=True):
    """Every document `target` loads from now on runs credemu's shim for `profile` (default: the client's).

    `target` is a Selenium WebDriver with `execute_cdp_cmd` (Chromium), or a Playwright `Page` or
    `BrowserContext`. `origin` (a URL is cut to its origin) is allowed on the server; without it the page's
    origin must already be (`--allow-origin`, `Server(allow_origins=...)`). Returns the shim's source.
    """
    if origin is not None:
        client.allow_origin(origin_of(origin))
    script = client.shim(profile or client.profile, autofill=autofill)
    if hasattr(target, "execute_cdp_cmd"):
        _selenium(target, script, bypass_csp)
    elif hasattr(target, "add_init_script"):
        _playwright(target, script, bypass_csp)
    else:
        raise TypeError(f"install_shim takes a Selenium driver or a Playwright page or context, not {type(target).__name__}")
    return script


def _selenium(driver, script, bypass_csp):
    if bypass_csp:
        driver.execute_cdp_cmd("Page.setBypassCSP", {"enabled": True})
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": script})


def _is_coroutine_function(function):
    import inspect
    return inspect.iscoroutinefunction(function)


def _playwright(target, script, bypass_csp):
    if _is_coroutine_function(target.add_init_script):
        raise TypeError("install_shim drives Playwright's sync API; with the async API call "
                        "`await context.add_init_script(client.shim())` on a context made with bypass_csp=True")
    target.add_init_script(script=script)
    if not bypass_csp:
        return
    if hasattr(target, "new_page"):  # a BrowserContext: its pages now and those it opens later
        for page in target.pages:
            _bypass_csp(target, page)
        target.on("page", lambda page: _bypass_csp(target, page))
    else:
        _bypass_csp(target.context, target)


def _bypass_csp(context, page):
    """Page.setBypassCSP over a CDP session (Chromium); a context made with `bypass_csp=True` needs none."""
    try:
        session = context.new_cdp_session(page)
        session.send("Page.setBypassCSP", {"enabled": True})
    except Exception as error:  # noqa: BLE001 - Firefox and WebKit have no CDP
        warnings.warn(f"credemu: could not bypass the page's Content-Security-Policy ({error}); create the Playwright "
                      "context with bypass_csp=True, or a strict CSP will block the shim's requests", stacklevel=3)
