// Progressive enhancement of the dashboard: the current section in sight, copy buttons, confirmations, and a chosen
// colour that takes effect. Every page works without it.

// A page answering a form (a new key, a revealed secret) takes the address of the page it shows, so that reloading it
// reads that page instead of posting the form again.
const path = document.body.dataset.path;
if (path && location.pathname !== path) history.replaceState(null, '', path);

// On a phone the sections scroll sideways: the current one is brought into sight (scrolling the row alone, so that a
// page opened at an anchor stays there).
const sections = document.querySelector('nav.sections');
const current = sections?.querySelector('[aria-current="page"]');
if (sections && current && sections.scrollWidth > sections.clientWidth) {
  const offset = current.getBoundingClientRect().left - sections.getBoundingClientRect().left;
  sections.scrollLeft += offset - (sections.clientWidth - current.offsetWidth) / 2;
}

for (const button of document.querySelectorAll('button.copy')) {
  button.addEventListener('click', async () => {
    const text = document.getElementById(button.dataset.copy)?.textContent ?? '';
    const label = button.textContent;
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = '✓';
    } catch {
      // No clipboard (an insecure origin): select the text so that the user can copy it.
      const range = document.createRange();
      range.selectNodeContents(document.getElementById(button.dataset.copy));
      getSelection().removeAllRanges();
      getSelection().addRange(range);
    }
    setTimeout(() => (button.textContent = label), 1500);
  });
}

for (const form of document.querySelectorAll('form[data-confirm]')) {
  form.addEventListener('submit', (event) => {
    if (!confirm(form.dataset.confirm)) event.preventDefault();
  });
}

// A form that spends something once (the authenticator's code of the payout account) is sent once: a double click
// would send the used code again and answer that it is wrong. Coming back to the page (the back button) enables it.
for (const form of document.querySelectorAll('form[data-once]')) {
  const buttons = form.querySelectorAll('button[type="submit"]');
  form.addEventListener('submit', () => setTimeout(() => buttons.forEach((button) => (button.disabled = true))));
  addEventListener('pageshow', () => buttons.forEach((button) => (button.disabled = false)));
}

// Picking a colour means using it: the box that keeps Tolov's own colour is unticked.
for (const picker of document.querySelectorAll('input[type="color"][data-unticks]')) {
  picker.addEventListener('input', () => {
    const box = document.getElementById(picker.dataset.unticks);
    if (box) box.checked = false;
  });
}
