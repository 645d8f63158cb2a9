"""The features and configs pages' "find anything": search as you type, the GET form, the table.

Called from browse.py's main() with its `Check` and the demo environment's path, signed in.
"""

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

# browse.py's window sizes; it imports this module, so they are read once both are loaded.
def sizes():
    from browse import DESKTOP, PHONE

    return DESKTOP, PHONE

VISIBLE_ITEMS = "return [...document.querySelectorAll(arguments[0])].filter(e => e.offsetParent !== null).map(e => e.dataset.name)"
# Elements that stick out of a phone's screen, but for those inside a box that scrolls sideways
# (the tables' regions, code snippets), which scroll within it.
WIDER_THAN_SCREEN = """
const scrolls = (e) => ['auto', 'scroll', 'hidden'].includes(getComputedStyle(e).overflowX);
const inScroller = (e) => { for (let p = e.parentElement; p; p = p.parentElement) if (scrolls(p)) return true; return false; };
return [...document.querySelectorAll('body *')]
  .filter(e => e.getClientRects().length && e.getBoundingClientRect().right > window.innerWidth + 1 && !inScroller(e))
  .map(e => e.outerHTML.slice(0, 80));
"""
# Types into the box as a user would (one input event), timing the page's answer; the handler
# filters synchronously, so the time is that of the whole update.
TIMED_INPUT = """
const box = document.getElementById('find-name');
box.value = arguments[0];
const start = performance.now();
box.dispatchEvent(new Event('input', {bubbles: true}));
return performance.now() - start;
"""


def visible(check, selector):
    return check.driver.execute_script(VISIBLE_ITEMS, selector)


def fits_phone(check, name):
    desktop, phone = sizes()
    driver = check.driver
    driver.set_window_size(*phone)
    try:
        for element in driver.execute_script(WIDER_THAN_SCREEN):
            check.fail(f"{name}: wider than a phone screen: {element}")
        return driver.execute_script("return document.documentElement.scrollHeight")
    finally:
        driver.set_window_size(*desktop)


def run(check, environment):
    desktop, phone = sizes()
    driver = check.driver
    cards = "li.card.feature[data-catalog-item]"

    # Search as you type: the cards narrow with no page load, the count and the URL follow.
    check.page("search-overview", environment, ["form#catalog-search input#find-name[type=search]", "#catalog-count[aria-live=polite]", cards], phone=True)
    everything = visible(check, cards)
    if len(everything) < 2:
        check.fail(f"search: the demo has {len(everything)} feature(s) on the overview; the search needs two")
        return
    target = everything[-1]
    # A part of a name, in other capitals: the search ignores case.
    typed = target[1:].upper()
    driver.execute_script("window.searchTaskMarker = true")
    box = driver.find_element(By.ID, "find-name")
    box.send_keys(typed)
    check.wait_for("the cards to narrow as the name is typed", lambda: len(visible(check, cards)) < len(everything))
    narrowed = visible(check, cards)
    if target not in narrowed or any(typed.lower() not in name.lower() for name in narrowed):
        check.fail(f"search: typing {typed!r} shows {narrowed}")
    if not driver.execute_script("return window.searchTaskMarker === true"):
        check.fail("search: typing loaded a page; it should filter in place")
    count = driver.find_element(By.ID, "catalog-count").text
    if count != f"{len(narrowed)} of {len(everything)} features":
        check.fail(f"search: the count says {count!r} for {len(narrowed)} shown of {len(everything)}")
    if "q=" not in driver.current_url:
        check.fail(f"search: the URL {driver.current_url} does not keep the search")
    elapsed = driver.execute_script(TIMED_INPUT, typed.lower())
    if elapsed > 100:
        check.fail(f"search: filtering took {elapsed:.0f} ms, more than 100")
    check.checked("search-typed", ["#catalog-count"])

    # A reload keeps it: the server hides what the script hid.
    driver.refresh()
    check.wait_for("the reloaded search", lambda: driver.find_element(By.ID, "find-name").get_attribute("value") == typed.lower())
    if visible(check, cards) != narrowed:
        check.fail(f"search: after a reload {visible(check, cards)} show, not {narrowed}")
    driver.find_element(By.ID, "find-name").clear()
    driver.find_element(By.ID, "find-name").send_keys("zzz-no-such-feature")
    check.wait_for("the empty message", lambda: driver.find_element(By.ID, "catalog-empty").is_displayed())

    # A filter through the GET form: the server answers, the control shows what was sent.
    driver.get(check.base + environment)
    kind = driver.find_element(By.CSS_SELECTOR, cards).get_attribute("data-kind")
    Select(driver.find_element(By.ID, "find-kind")).select_by_value(kind)
    driver.execute_script("window.searchTaskMarker = true")
    check.click("form#catalog-search button[type=submit]")
    check.wait_for("the filtered page", lambda: f"kind={kind}" in driver.current_url and not driver.execute_script("return window.searchTaskMarker === true"))
    kinds = driver.execute_script("return [...document.querySelectorAll(arguments[0])].filter(e => e.offsetParent !== null).map(e => e.dataset.kind)", cards)
    if not kinds or set(kinds) != {kind}:
        check.fail(f"search: the form's kind={kind} shows kinds {kinds}")
    if Select(driver.find_element(By.ID, "find-kind")).first_selected_option.get_attribute("value") != kind:
        check.fail("search: the kind control does not show the kind sent")
    check.checked("search-kind", ["select#find-kind option[selected]"])

    # The table: one row per feature, in a scrolling region, chosen by the toggle.
    check.click(".view-toggle a.view-table")
    check.wait_for("the table view", lambda: "view=table" in driver.current_url)
    check.checked("search-table", ["div.scroll[role=region][tabindex='0'][aria-label] table.features tbody tr", ".view-toggle a.view-table[aria-current=page]"], phone=True)
    if driver.find_elements(By.CSS_SELECTOR, "ul.cards"):
        check.fail("search: the table view still has the cards")
    if "kind=" not in driver.current_url:
        check.fail("search: switching to the table dropped the filter")
    fits_phone(check, "search-table")
    # At 1280 px the whole table shows, its last column included: nothing to scroll sideways to.
    driver.get(check.base + environment + "?view=table")
    hidden = driver.execute_script("const e = document.querySelector('div.catalog-table'); return e.scrollWidth - e.clientWidth")
    if hidden > 1:
        check.fail(f"search-table: the features table is {hidden} px wider than its region at {driver.get_window_size()['width']} px")

    # Phones get compact cards by default (a line each, details on the feature's page), and the
    # page fits the screen.
    driver.get(check.base + environment)
    # On a phone the filters fold under "Filters", so the first result shows on the first screen.
    driver.set_window_size(*phone)
    try:
        driver.get(check.base + environment)
        first = driver.execute_script("const e = [...document.querySelectorAll(arguments[0])].find(e => e.offsetParent !== null); return e ? e.getBoundingClientRect().top : 1e9", cards)
        if driver.execute_script("return document.querySelector('details.filters').open"):
            check.fail("search-phone: the filters are open on a phone with none set")
        if first > driver.execute_script("return window.innerHeight"):
            check.fail(f"search-phone: the first result starts at y = {first:.0f}, below the first screen")
        # The header and navigation leave the page's title in the first third of the screen.
        title = driver.execute_script("return document.querySelector('main h1').getBoundingClientRect().top")
        if title > phone[1] / 3:
            check.fail(f"search-phone: the page's title starts at y = {title:.0f}, below the first third of the screen")
        print(f"     overview at {phone[0]}x{phone[1]}: title at y = {title:.0f}, first result at y = {first:.0f}")
    finally:
        driver.set_window_size(*desktop)
        driver.get(check.base + environment)
    height = fits_phone(check, "search-overview-phone")
    print(f"     overview at {phone[0]}x{phone[1]}: {height} px tall with {len(everything)} features")
    driver.set_window_size(*phone)
    # A card's warnings stay on a phone: only cards without any are a line.
    tallest = driver.execute_script("return Math.max(0, ...[...document.querySelectorAll(arguments[0])].filter(e => !e.querySelector('ul.diagnostics li')).map(e => e.getBoundingClientRect().height))", cards)
    if tallest > 80 or driver.find_elements(By.CSS_SELECTOR, "li.card.feature svg.bar") and driver.find_element(By.CSS_SELECTOR, "li.card.feature svg.bar").is_displayed():
        check.fail(f"search: a phone's default cards should be one line without details; the tallest is {tallest:.0f} px")
    driver.set_window_size(*desktop)

    # The configs page: typing narrows the rows the same way.
    rows = "table.configs tr[data-catalog-item]"
    check.page("search-configs", environment + "/configs", ["form#catalog-search select#find-type", "select#find-follows", rows], phone=True)
    configs = visible(check, rows)
    if configs:
        typed = configs[0][:4]
        driver.find_element(By.ID, "find-name").send_keys(typed)
        check.wait_for("the configs to narrow", lambda: all(typed.lower() in name.lower() for name in visible(check, rows)))
        if configs[0] not in visible(check, rows):
            check.fail(f"search: typing {typed!r} hides the config {configs[0]!r}")
    fits_phone(check, "search-configs")
