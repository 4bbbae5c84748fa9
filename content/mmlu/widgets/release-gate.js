// The release gate every document shares (static/js/widgets/gate.js).
export { setup, apply } from '/static/js/widgets/gate.js';
