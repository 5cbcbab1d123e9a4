// The printable receipt's Print button (there once the receipt is final): shown only where a script can print; the
// page is whole without it.
const button = document.getElementById('print');
if (button) {
  button.addEventListener('click', () => window.print());
  button.hidden = false;
}
