/**
 * Draws the fake's screen from its state, in the shapes flume's screen reader looks for: the input
 * box (`❯` between two rules of `─`, a footer), the spinner line, and the three dialogs (permission,
 * question, trust). A frame is written in one go and overwrites the last in place, so a capture
 * taken mid-frame never sees an empty screen.
 */
const GLYPHS = ['·', '✢', '✳', '✶', '✻', '✽'];
const FOOTERS = {
  acceptEdits: '⏵⏵ accept edits on (shift+tab to cycle)',
  plan: '⏸ plan mode on (shift+tab to cycle)',
  bypassPermissions: '⏵⏵ bypass permissions on (shift+tab to cycle)',
};

/** The frame for the app's state, as one string of terminal output. */
export function frame(app, cols, rows) {
  if (app.phase === 'starting') return '\x1b[?25l\x1b[H\x1b[2J';
  const rule = '─'.repeat(cols);
  const top = [` ✻ Claude Code (fake) v${app.version}`, `   ${app.model} · ${app.cwd}`, '', ...app.history.map((line) => clip(line, cols))];
  const bottom = [''];
  if (app.phase === 'busy') {
    const seconds = Math.floor((Date.now() - app.turn.startedAt) / 1000);
    bottom.push(`${GLYPHS[seconds % GLYPHS.length]} ${app.turn.verb}… (${seconds}s · ↓ ${app.turn.tokens} tokens)`, '');
  }
  for (const text of app.queued) bottom.push(clip(`  ⏎ ${text.replace(/\n/g, ' ')} (queued)`, cols));
  if (app.dialog) bottom.push(rule, ...dialogLines(app.dialog));
  else {
    const [first, ...more] = app.draft.split('\n');
    bottom.push(rule, `❯ ${first}`, ...more.map((line) => `  ${line}`), rule, `  ${app.note || FOOTERS[app.permissionMode] || '? for shortcuts'}`);
  }
  const room = rows - bottom.reduce((sum, line) => sum + rowsOf(line, cols), 0);
  const lines = [...fit(top, room, cols), ...bottom];
  const body = lines.map((line) => `\x1b[2K${line}${width(line) % cols === 0 && line ? '' : '\x1b[K'}`).join('\r\n');
  return `\x1b[?25l\x1b[H${body}\x1b[J`;
}

/** The lines of an open dialog, below its rule. */
function dialogLines(dialog) {
  const pointer = (index) => (index === dialog.selected ? '❯' : ' ');
  if (dialog.kind === 'permission') {
    const create = dialog.tool === 'Write';
    const options = ['Yes', create ? 'Yes, allow all edits during this session (shift+tab)' : "Yes, and don't ask again for this command", 'No, and tell Claude what to do differently (esc)'];
    return [
      create ? ' Create file' : ` ${dialog.tool} command`,
      '',
      `   ${dialog.subject}`,
      '',
      create ? ` Do you want to create ${dialog.subject.split('/').pop()}?` : ' Do you want to proceed?',
      ...options.map((label, index) => ` ${pointer(index)} ${index + 1}. ${label}`),
      '',
      ' Esc to cancel',
    ];
  }
  if (dialog.kind === 'trust') {
    return [
      ' Quick safety check: Is this a project you created or one you trust? (Like your own code, a',
      ' well-known open source project, or work from your team). If not, take a moment to review',
      " what's in this folder first.",
      '',
      ` ${dialog.cwd}`,
      '',
      ` ${pointer(0)} 1. Yes, I trust this folder`,
      ` ${pointer(1)} 2. No, exit`,
      '',
      ' Enter to confirm · Esc to cancel',
    ];
  }
  const choices = [...dialog.options.map((option) => option.label), dialog.typing === null ? 'Type something.' : dialog.typing];
  const lines = [` ☐ ${dialog.header}`, '', ` ${dialog.question}`, ''];
  choices.forEach((label, index) => {
    lines.push(` ${pointer(index)} ${index + 1}. ${label}`);
    const description = dialog.options[index]?.description;
    if (description) lines.push(`      ${description}`);
  });
  lines.push(` ${'─'.repeat(20)}`, ` ${pointer(choices.length)} ${choices.length + 1}. Chat about this`, '');
  lines.push(' Enter to select · ↑/↓ to navigate · Esc to cancel');
  return lines;
}

/** The last lines of `lines` that fit in `room` rows. */
function fit(lines, room, cols) {
  const kept = [];
  for (let i = lines.length - 1; i >= 0 && room > 0; i--) {
    room -= rowsOf(lines[i], cols);
    if (room >= 0) kept.unshift(lines[i]);
  }
  return kept;
}

function rowsOf(line, cols) {
  return Math.max(1, Math.ceil(width(line) / cols));
}

function clip(line, cols) {
  let out = '';
  let used = 0;
  for (const ch of line) {
    used += charWidth(ch);
    if (used > cols) break;
    out += ch;
  }
  return out;
}

function width(line) {
  let used = 0;
  for (const ch of line) used += charWidth(ch);
  return used;
}

function charWidth(ch) {
  const code = ch.codePointAt(0);
  const wide =
    (code >= 0x1100 && code <= 0x115f) || (code >= 0x2e80 && code <= 0xa4cf) || (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) || (code >= 0xfe30 && code <= 0xfe4f) || (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) || (code >= 0x1f300 && code <= 0x1faff) || (code >= 0x20000 && code <= 0x3fffd);
  return wide ? 2 : 1;
}
