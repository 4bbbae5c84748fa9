// The flips view every document shares (static/js/widgets/flips.js).
export { setup, apply } from '/static/js/widgets/flips.js';
