// The release gate every document shares (static/js/widgets/gate.js).
export { setup, apply, onInput } from '/static/js/widgets/gate.js';
