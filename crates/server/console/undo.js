// Undo after a delete, the same for projects and datasets: the notice that the item is in the
// recycle bin with an Undo button (restore in place), shown where the list it left is. A
// delete made from the item's own page hands the notice to the page it goes to (offerUndo,
// then that page's takeUndo).

import { api } from './api.js';
import { button, describeError, h, replace } from './dom.js';

let pending = null;

/**
 * A notice after a delete: the item is in the recycle bin, with Undo (restore in place).
 * `item`: {kind: 'project' | 'dataset', id, name}; `onRestored()` refreshes the page.
 */
export function undoNotice(item, onRestored) {
  const text = h('span', {}, `“${item.name}” is in the recycle bin. `);
  const undo = button('Undo', async () => {
    undo.disabled = true;
    try {
      await api('PUT', `/api/recycle-bin/${item.kind}/${item.id}/restore`);
      replace(box, h('span', {}, `Restored “${item.name}”.`));
      onRestored?.();
    } catch (failure) {
      undo.disabled = false;
      replace(text, `“${item.name}” could not be restored: ${describeError(failure)} `);
      box.setAttribute('role', 'alert');
    }
  }, { class: ['button', 'button-small'], 'aria-label': `Undo: restore ${item.name}` });
  const box = h('div', { class: ['notice', 'notice-success', 'undo-notice'], role: 'status' },
    text, undo, ' ', h('a', { href: '#/bin' }, 'Recycle bin'));
  return box;
}

/** Keeps `item` for the next page to offer Undo for (a delete from the item's own page). */
export function offerUndo(item) {
  pending = item;
}

/** The Undo notice kept by offerUndo, once, or null. */
export function takeUndo(onRestored) {
  const item = pending;
  pending = null;
  return item ? undoNotice(item, onRestored) : null;
}
