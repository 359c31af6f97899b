/**
 * The fake's dialogs (permission, question, trust): while one is open, keys go to it and nothing
 * typed reaches the agent. Digits pick, ↑/↓ move, Enter picks the highlighted, Esc cancels.
 */

/** Returns { openDialog, dialogKey } over the app's state. */
export function createDialogs(app) {
  /** Opens a dialog; resolves with what the keys chose. The turn's status is `waiting` meanwhile. */
  function openDialog(dialog) {
    const phase = app.phase;
    return new Promise((resolve) => {
      app.dialog = { ...dialog, selected: dialog.kind === 'trust' ? 1 : 0, resolve };
      app.setPhase(phase === 'busy' ? 'dialog' : phase);
    }).finally(() => {
      app.dialog = null;
      app.setPhase(phase);
    });
  }

  /** A key while a dialog is open. Digits pick, ↑/↓ move, Enter picks the highlighted, Esc cancels. */
  function dialogKey(event) {
    const dialog = app.dialog;
    const count = dialog.kind === 'permission' ? 3 : dialog.kind === 'trust' ? 2 : dialog.options.length + 2;
    if (typeof dialog.typing === 'string') {
      if (event.type !== 'key') dialog.typing += event.text.replace(/\n/g, ' ');
      else if (event.name === 'backspace') dialog.typing = Array.from(dialog.typing).slice(0, -1).join('');
      else if (event.name === 'enter' && dialog.typing.trim()) return dialog.resolve({ answer: dialog.typing.trim() });
      else if (event.name === 'esc') dialog.typing = null;
      return app.render();
    }
    if (event.type === 'key' && event.name === 'esc') return dialog.resolve({});
    if (event.type === 'key' && (event.name === 'up' || event.name === 'down')) dialog.selected = (dialog.selected + (event.name === 'up' ? count - 1 : 1)) % count;
    let chosen = event.type === 'key' && event.name === 'enter' ? dialog.selected : undefined;
    const digit = event.type !== 'key' ? Array.from(event.text).find((ch) => ch >= '1' && ch <= String(count)) : undefined;
    if (digit) chosen = Number(digit) - 1;
    if (chosen !== undefined) choose(dialog, chosen);
    app.render();
  }

  function choose(dialog, index) {
    if (dialog.kind === 'permission') return dialog.resolve({ approve: index < 2 });
    if (dialog.kind === 'trust') return dialog.resolve({ trusted: index === 0 });
    if (index < dialog.options.length) return dialog.resolve({ answer: dialog.options[index].label });
    if (index === dialog.options.length) {
      dialog.selected = index;
      dialog.typing = '';
    } else dialog.resolve({});
  }

  return { openDialog, dialogKey };
}
