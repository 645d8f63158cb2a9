"""The accessibility checks the dashboard's pages must pass, written for what axe-core would
check here (it is not on the registries): every page in both widths.

- headings: one h1, and no level skipped on the way down;
- names: a control's accessible name contains its visible text (WCAG 2.5.3), and an icon-only
  control has a name;
- contrast: text against the background it is drawn on, 4.5:1 (3:1 when large; WCAG 1.4.3);
- targets: at phone width, buttons, fields and button-like links are at least 44 px tall and
  wide, their label counted (WCAG 2.5.5); links inside running text are exempt;
- layout: a table wider than its box scrolls, with a visible cue;
- the focus ring: 3:1 against the background around it (WCAG 1.4.11), checked by tabbing.
"""

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

# Shared by the checks below: parsing a computed colour, the background an element is drawn on,
# and the contrast ratio of two colours (WCAG 2's relative luminance).
COLOURS = """
const rgba = (text) => {
  const parts = text.match(/[\\d.]+/g);
  if (!parts) return [0, 0, 0, 0];
  return [Number(parts[0]), Number(parts[1]), Number(parts[2]), parts.length > 3 ? Number(parts[3]) : 1];
};
const over = (top, bottom) => {
  const a = top[3];
  return [0, 1, 2].map(i => top[i] * a + bottom[i] * (1 - a)).concat([1]);
};
const background = (element) => {
  const layers = [];
  for (let e = element; e; e = e.parentElement) {
    const colour = rgba(getComputedStyle(e).backgroundColor);
    if (colour[3] > 0) layers.push(colour);
    if (colour[3] >= 1) break;
  }
  let result = [255, 255, 255, 1];
  for (const layer of layers.reverse()) result = over(layer, result);
  return result;
};
const luminance = (c) => {
  const [r, g, b] = c.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const contrast = (a, b) => {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
};
const visible = (e) => {
  // checkVisibility: also false inside a closed <details>, whose content still has a box.
  if (e.checkVisibility && !e.checkVisibility({ visibilityProperty: true })) return false;
  const box = e.getBoundingClientRect();
  const style = getComputedStyle(e);
  return box.width > 0 && box.height > 0 && style.visibility !== "hidden" && style.display !== "none" && !e.closest("[hidden], .visually-hidden, .skip");
};
const describe = (e) => e.outerHTML.slice(0, 90).replace(/\\s+/g, " ");
"""

HEADINGS = """
const problems = [];
let previous = 0;
for (const heading of document.querySelectorAll("h1, h2, h3, h4, h5, h6")) {
  const level = Number(heading.tagName[1]);
  if (previous && level > previous + 1) problems.push(`h${level} after h${previous}: ${heading.textContent.trim().slice(0, 60)}`);
  previous = level;
}
return problems;
"""

NAMES = COLOURS + """
const problems = [];
const words = (text) => (text || "").replace(/\\s+/g, " ").trim().toLowerCase();
// Fields are named by their labels, which the page check already requires.
for (const e of document.querySelectorAll("a[href], button, [role=button]:not(input), [role=switch]:not(input)")) {
  if (!visible(e)) continue;
  const text = words(e.innerText);
  const label = e.getAttribute("aria-label");
  if (!text && !label && !e.getAttribute("aria-labelledby") && !e.querySelector("img[alt], svg[aria-label]")) problems.push("no name: " + describe(e));
  if (label && text && !words(label).includes(text)) problems.push(`name "${label}" lacks the visible "${e.innerText.trim()}": ${describe(e)}`);
}
return problems;
"""

CONTRAST = COLOURS + """
const problems = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
const seen = new Set();
while (walker.nextNode()) {
  const node = walker.currentNode;
  const e = node.parentElement;
  if (!node.textContent.trim() || seen.has(e) || !visible(e) || e.closest("svg, option, select")) continue;
  seen.add(e);
  const style = getComputedStyle(e);
  const size = parseFloat(style.fontSize);
  const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
  const ratio = contrast(rgba(style.color), background(e));
  if (ratio < (large ? 3 : 4.5)) problems.push(`contrast ${ratio.toFixed(2)}:1 of "${node.textContent.trim().slice(0, 40)}" in ${describe(e)}`);
}
return problems;
"""

TARGETS = COLOURS + """
const problems = [];
const controls = document.querySelectorAll("button, select, input:not([type=hidden]), textarea, a.button, nav a, a.label");
for (const e of controls) {
  if (!visible(e) && !(e.type === "checkbox" || e.type === "radio")) continue;
  const target = e.closest("label") || (e.id && document.querySelector(`label[for="${e.id}"]`) && (e.type === "checkbox" || e.type === "radio") ? document.querySelector(`label[for="${e.id}"]`) : e);
  const box = target.getBoundingClientRect();
  if (box.width === 0) continue;
  if (box.height < 43.5 || box.width < 43.5) problems.push(`target ${Math.round(box.width)}×${Math.round(box.height)} px: ${describe(e)}`);
}
return problems;
"""

# A table wider than its box: the box scrolls, with the cue that it does (its shadows).
CUT_TABLES = """
const problems = [];
for (const table of document.querySelectorAll("table")) {
  const box = table.parentElement;
  if (box.scrollWidth <= box.clientWidth + 1 && table.scrollWidth <= box.clientWidth + 1) continue;
  const style = getComputedStyle(box);
  if (!["auto", "scroll"].includes(style.overflowX)) problems.push("a table is cut: " + table.outerHTML.slice(0, 60));
  else if (style.backgroundImage === "none") problems.push("a table scrolls without a cue: " + table.outerHTML.slice(0, 60));
}
return problems;
"""

FOCUS_RING = COLOURS + """
const e = document.activeElement;
if (!e || e === document.body) return null;
const style = getComputedStyle(e);
const width = parseFloat(style.outlineWidth);
if (style.outlineStyle === "none" || width < 2) return `no focus ring (outline ${style.outlineStyle} ${style.outlineWidth}): ${describe(e)}`;
const ratio = contrast(rgba(style.outlineColor), background(e.parentElement || e));
return ratio < 3 ? `focus ring ${ratio.toFixed(2)}:1 against its background: ${describe(e)}` : null;
"""


def violations(driver, phone):
    """What the page in `driver` breaks, as sentences; targets only at phone width."""
    found = []
    found += driver.execute_script(HEADINGS)
    found += driver.execute_script(NAMES)
    found += driver.execute_script(CONTRAST)
    found += driver.execute_script(CUT_TABLES)
    if phone:
        found += driver.execute_script(TARGETS)
    return found


def focus_ring_violations(driver, stops=12):
    """Tabs through the first `stops` focusable elements of the page and checks each one's ring."""
    found = []
    driver.execute_script("document.activeElement.blur()")
    for _ in range(stops):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        problem = driver.execute_script(FOCUS_RING)
        if problem and problem not in found:
            found.append(problem)
    return found
