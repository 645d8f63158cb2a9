// Live bias plan: as biases are typed, the page's own preview is fetched and its plan, or why
// the app would not apply them, shown; Apply is disabled until the plan shown is of the numbers
// typed. Without JavaScript the "Preview the move" button does the same with a page load, and
// the server refuses to apply numbers other than the planned ones.
// JSON config values: each is parsed as it is typed and its error shown (the form won't send
// a value that can't be a json config's); the server checks it again, and alone without JavaScript.
// Copy buttons: the snippet they name to the clipboard.
"use strict";
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const snippet = document.getElementById(button.dataset.copy);
  if (!snippet || !navigator.clipboard) return;
  await navigator.clipboard.writeText(snippet.textContent);
  button.textContent = "Copied";
});
document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("bias-form");
  const plan = document.getElementById("plan");
  if (!form || !plan) return;
  let timer = null;
  let generation = 0;
  const applyButtons = () => form.querySelectorAll("button[value=apply]");
  form.addEventListener("input", (event) => {
    // The reason is not part of the plan.
    if (event.target.hasAttribute("data-reason")) return;
    // The plan shown is of other numbers now: nothing can be applied until the plan of these is.
    for (const button of applyButtons()) button.disabled = true;
    plan.setAttribute("aria-busy", "true");
    const mine = ++generation;
    clearTimeout(timer);
    timer = setTimeout(async () => {
      if (!form.checkValidity()) {
        const note = document.createElement("p");
        note.className = "error";
        note.textContent = "Each bias is a number from 0 to 100: the plan shows once every field has one.";
        plan.replaceChildren(note);
        plan.removeAttribute("aria-busy");
        return;
      }
      const data = new URLSearchParams(new FormData(form));
      data.set("action", "preview");
      // getAttribute: `form.action` would be the button named "action".
      const response = await fetch(form.getAttribute("action"), { method: "POST", body: data, credentials: "same-origin" });
      if (mine !== generation) return;
      const page = new DOMParser().parseFromString(await response.text(), "text/html");
      const fresh = page.getElementById("plan");
      const buttons = page.querySelector("#bias-form .buttons");
      const error = page.querySelector("main > .error");
      plan.replaceChildren(...(fresh ? fresh.childNodes : []));
      if (error) plan.prepend(error);
      plan.removeAttribute("aria-busy");
      // The fresh page offers Apply (with what it planned) only when these numbers have a plan.
      const current = form.querySelector(".buttons");
      if (buttons && current) current.replaceChildren(...buttons.childNodes);
    }, 300);
  });
});

document.addEventListener("DOMContentLoaded", () => {
  for (const area of document.querySelectorAll("textarea[data-json]")) {
    const message = document.getElementById(area.id + "-check");
    const check = () => {
      const text = area.value.trim();
      let problem = "";
      // A blank variation value is no value (the default applies); a blank default is caught by `required`.
      if (text !== "") {
        try {
          const value = JSON.parse(text);
          if (value === null || typeof value !== "object" || Array.isArray(value)) {
            problem = "A json config's value is a JSON object, such as {\"accent\": \"blue\"}.";
          }
        } catch (error) {
          problem = "This is not JSON: " + error.message;
        }
      }
      area.setCustomValidity(problem);
      // Only what this script marked is unmarked: the server's own verdict stays until sent again.
      if (problem) {
        area.setAttribute("aria-invalid", "true");
        area.dataset.clientInvalid = "true";
      } else if (area.dataset.clientInvalid) {
        area.removeAttribute("aria-invalid");
        delete area.dataset.clientInvalid;
      }
      if (message) message.textContent = problem;
    };
    area.addEventListener("input", check);
    check();
  }
});

// A form whose Apply carries the plan it was made for (`data-planned`, a config's editor): once a
// field changes, the plan shown is of other values, so Apply is disabled until it is planned again
// (the server refuses it anyway).
document.addEventListener("input", (event) => {
  const form = event.target.closest("form[data-planned]");
  if (!form || event.target.hasAttribute("data-reason")) return;
  for (const button of form.querySelectorAll("button[value=apply]")) button.disabled = true;
});

// Folded filters open by themselves where there is room for them.
document.addEventListener("DOMContentLoaded", () => {
  if (!window.matchMedia("(min-width: 40rem)").matches) return;
  for (const details of document.querySelectorAll("details[data-open-wide]")) details.open = true;
});

// Times in the viewer's zone: the server writes them in UTC, the browser knows where its reader is.
document.addEventListener("DOMContentLoaded", () => {
  const format = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  for (const element of document.querySelectorAll("time[datetime]")) {
    const date = new Date(element.getAttribute("datetime"));
    if (Number.isNaN(date.getTime())) continue;
    element.title = element.getAttribute("datetime");
    element.textContent = format.format(date);
  }
});

// Search as you type, on the features and configs pages: each keystroke hides the items that
// don't match, by the rules the server applies to the same GET form (each control names the
// data-* attribute it compares: `contains` ignoring case, `includes` for a list, `equals`), with
// no request; the URL follows (replaceState) so a reload shows the same. Changing the order
// reloads. Without JavaScript the form's Search button asks the server.
document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("catalog-search");
  if (!form) return;
  const facts = [...document.querySelectorAll("[data-catalog-item]")].map((item) => ({
    item,
    data: item.dataset,
    name: item.dataset.name.toLowerCase(),
    tags: JSON.parse(item.dataset.tags || "[]"),
  }));
  const groups = [...document.querySelectorAll("[data-catalog-group]")];
  const controls = [...form.querySelectorAll("[data-match]")];
  const count = document.getElementById("catalog-count");
  const empty = document.getElementById("catalog-empty");
  const tagged = document.getElementById("tagged-note");
  const toggles = [...document.querySelectorAll(".view-toggle a")];
  // Count features by name, not elements: a page could show one in two places.
  const total = new Set(facts.map((fact) => fact.data.name)).size;
  const tests = {
    contains: (fact, field, value) => fact[field].includes(value.toLowerCase()),
    includes: (fact, field, value) => fact[field].includes(value),
    equals: (fact, field, value) => fact.data[field] === value,
    // Days as YYYY-MM-DD order as text; a feature without a known change is not "since" any day.
    since: (fact, field, value) => (fact.data[field] || "") !== "" && fact.data[field] >= value,
  };
  const query = (changes) => {
    const pairs = new URLSearchParams();
    for (const [key, value] of new FormData(form)) {
      const control = form.elements[key];
      if (value !== "" && !(control && control.dataset && control.dataset.default === value)) pairs.append(key, value);
    }
    for (const [key, value] of Object.entries(changes)) pairs.set(key, value);
    const text = pairs.toString();
    return form.getAttribute("action") + (text ? "?" + text : "");
  };
  const apply = () => {
    const active = controls.filter((control) => control.value !== "");
    const shown = new Set();
    for (const fact of facts) {
      const matches = active.every((control) => tests[control.dataset.match](fact, control.dataset.field, control.value));
      fact.item.hidden = !matches;
      if (matches) shown.add(fact.data.name);
    }
    for (const group of groups) group.hidden = !group.querySelector("[data-catalog-item]:not([hidden])");
    count.textContent = `${shown.size} of ${total} ${total === 1 ? form.dataset.noun : form.dataset.nouns}`;
    if (empty) {
      empty.textContent = form.dataset.empty;
      empty.hidden = shown.size > 0 || total === 0;
    }
    if (tagged && form.elements.tag) tagged.hidden = form.elements.tag.value !== tagged.dataset.tag;
    history.replaceState(history.state, "", query({}));
    for (const toggle of toggles) toggle.href = query({ view: toggle.classList.contains("view-table") ? "table" : "cards" });
  };
  form.addEventListener("input", (event) => {
    if (event.target.matches("[data-match]")) apply();
  });
  form.addEventListener("change", (event) => {
    if (event.target.matches("[data-reload]")) form.requestSubmit();
  });
});
