// A percent setting's box (widgetkit Param(..., percent=True)): the widget's state holds a share
// (0.3), the box a reader types in shows and takes percent (30, "%" beside it) and names the
// setting in data-percent-of. These turn a box's text into the setting's value and back, for the
// form's script (widget.js) and the figure's handles (draggable-mark.js).

// A share as the box shows it: 0.3 → "30", 0.726 → "72.6" (as widgetkit.settings.in_percent).
export function inPercent(share) {
  return String(Number((100 * Number(share)).toPrecision(10)));
}

// The setting's value a box holds (a percent box's 30 is 0.3).
export function settingValue(box) {
  return box.dataset.percentOf ? Number(box.value) / 100 : Number(box.value);
}

// The text a box shows for the setting's value `value` (a number or its text).
export function boxText(box, value) {
  return box.dataset.percentOf ? inPercent(value) : String(value);
}
