// The Share / embed box every widget page shows (share_box in templates/widgets/_macros.html):
// reveal its Copy buttons and copy a field's text, or select it for Ctrl+C where the browser
// refuses the clipboard. Used by widget.js and by the live widgets' own scripts.

async function copy(box, button) {
  const field = box.querySelector(`#${button.dataset.copy}`);
  const status = box.querySelector('.share-status');
  try {
    await navigator.clipboard.writeText(field.value);
    status.textContent = 'Copied.';
  } catch {
    field.select();
    status.textContent = 'Selected: press Ctrl+C (or ⌘C) to copy.';
  }
}

export function enableShareBox(root) {
  for (const box of root.querySelectorAll('.widget-share')) {
    for (const button of box.querySelectorAll('[data-copy]')) {
      button.hidden = false;
      button.addEventListener('click', () => copy(box, button));
    }
  }
}
