/**
 * The fake's dialogs (permission, question, trust): while one is open, keys go to it and nothing
 * typed reaches the agent. Digits pick (not in the trust dialog, which shows no numbers), ↑/↓ move,
 * Enter picks the highlighted, Esc cancels. Menus and keys as 2.1.332's (screen.mjs draws them).
 */
import { permissionOptions } from './screen.mjs';

/** Returns { openDialog, dialogKey } over the app's state. */
export function createDialogs(app) {
  /** Opens a dialog; resolves with what the keys chose. The turn's status is `waiting` meanwhile. */
  function openDialog(dialog) {
    const phase = app.phase;
    return new Promise((resolve) => {
      // The trust dialog's cursor starts on its first option, `No, exit`, as every menu's does.
      app.dialog = { cwd: app.cwd, description: dialog.subject, ...dialog, selected: 0, resolve };
      app.setPhase(phase === 'busy' ? 'dialog' : phase);
    }).finally(() => {
      app.dialog = null;
      app.setPhase(phase);
    });
  }

  /** A key while a dialog is open. Digits pick, ↑/↓ move, Enter picks the highlighted, Esc cancels. */
  function dialogKey(event) {
    const dialog = app.dialog;
    const count = dialog.kind === 'permission' ? permissionOptions(dialog).length : dialog.kind === 'trust' ? 2 : dialog.options.length + 2;
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
    const digit = event.type !== 'key' && dialog.kind !== 'trust' ? Array.from(event.text).find((ch) => ch >= '1' && ch <= String(count)) : undefined;
    if (digit) chosen = Number(digit) - 1;
    if (chosen !== undefined) choose(dialog, chosen);
    app.render();
  }

  function choose(dialog, index) {
    if (dialog.kind === 'permission') {
      // Every option but the last allows; 2.1.332's third (Bash) also switches to auto mode.
      const count = permissionOptions(dialog).length;
      if (count === 4 && index === 2) app.permissionMode = 'auto';
      return dialog.resolve({ approve: index < count - 1 });
    }
    if (dialog.kind === 'trust') return dialog.resolve({ trusted: index === 1 });
    if (index < dialog.options.length) return dialog.resolve({ answer: dialog.options[index].label });
    if (index === dialog.options.length) {
      dialog.selected = index;
      dialog.typing = '';
    } else dialog.resolve({});
  }

  return { openDialog, dialogKey };
}
