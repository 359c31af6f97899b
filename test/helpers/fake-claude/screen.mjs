/**
 * Draws the fake's screen from its state, in the shapes Claude Code 2.1.332 draws them (see
 * test/fixtures/claude-2.1.332/README.md): the input box (`❯` and a no-break space between two rules
 * of `─`, the effort line above it, a footer under it), the spinner line, the queued echo and its
 * placeholder, and the three dialogs (permission, question, trust). A frame is written in one go and
 * overwrites the last in place, so a capture taken mid-frame never sees an empty screen.
 */
const GLYPHS = ['·', '✢', '✳', '✶', '✻', '✽'];
/** The box's `❯` is followed by a no-break space (U+00A0); echoes of sent prompts use a plain one. */
export const BOX_PROMPT = '❯\u00a0';
/** The echo of a sent prompt in the conversation, and a reply's bullet. */
export const ECHO = '❯ ';
export const BULLET = '● ';
/** What the box shows, dim, while a prompt waits in the queue and nothing is typed. */
export const QUEUED_PLACEHOLDER = 'Press up to edit queued messages';
const MODES = {
  default: '⏸ manual mode on',
  acceptEdits: '⏵⏵ accept edits on (shift+tab to cycle)',
  plan: '⏸ plan mode on (shift+tab to cycle)',
  auto: '⏵⏵ auto mode on (shift+tab to cycle)',
  bypassPermissions: '⏵⏵ bypass permissions on (shift+tab to cycle)',
};

/** The frame for the app's state, as one string of terminal output. */
export function frame(app, cols, rows) {
  if (app.phase === 'starting') return '\x1b[?25l\x1b[H\x1b[2J';
  const rule = '─'.repeat(cols);
  // The trust dialog stands alone at the top of the screen, before any banner.
  if (app.dialog?.kind === 'trust') return paint([rule, ...trustLines(app.dialog)], cols);
  // Answered, the trust dialog stays on screen until the program goes on (or exits under it).
  if (app.phase === 'trust') return '';
  const top = [` ✻ Claude Code (fake) v${app.version}`, `   ${app.model} · ${app.cwd}`, '', ...app.history.map((line) => clip(line, cols))];
  for (const text of app.queued) {
    top.push(...echoLines(text).map((line) => clip(line, cols)), '  ⎿  Queued · ctrl+x ctrl+s to send now');
  }
  const bottom = [''];
  if (app.phase === 'busy') {
    const seconds = Math.floor((Date.now() - app.turn.startedAt) / 1000);
    bottom.push(`${GLYPHS[seconds % GLYPHS.length]} ${app.turn.verb}… (${seconds}s · ↓ ${app.turn.tokens} tokens)`);
  }
  if (app.dialog) bottom.push(rule, ...dialogLines(app.dialog, rule));
  else {
    const shown = app.draft || (app.queued.length ? QUEUED_PLACEHOLDER : '');
    const [first, ...more] = shown.split('\n');
    bottom.push(`${' '.repeat(Math.max(0, cols - 20))}◐ medium · /effort`, rule, `${BOX_PROMPT}${first}`, ...more.map((line) => `  ${line}`), rule, `  ${footer(app)}`);
  }
  const room = rows - bottom.reduce((sum, line) => sum + rowsOf(line, cols), 0);
  return paint([...fit(top, room, cols), ...bottom], cols);
}

/** A sent prompt as the conversation shows it: `❯ ` and the text, more lines indented two spaces. */
export function echoLines(text) {
  return text.split('\n').map((line, index) => `${index ? '  ' : ECHO}${line}`);
}

/**
 * The line under the box. The mode first; `esc to interrupt` while working; once the footer has had
 * its second render (`app.footerReady`) and the box is empty, `? for shortcuts` (manual mode) and
 * `← for agents`. A note (`Press Ctrl-C again to exit`) or a fresh paste takes the whole line.
 */
function footer(app) {
  if (app.note) return app.note;
  if (/\[Pasted text #\d+/.test(app.draft)) return 'paste again to expand';
  const parts = [MODES[app.permissionMode] ?? MODES.default];
  if (app.phase === 'busy') parts.push('esc to interrupt');
  if (app.footerReady && !app.draft) {
    if (app.permissionMode === 'default') parts.push('? for shortcuts');
    parts.push('← for agents');
  }
  return parts.join(' · ');
}

/** The lines of an open dialog (permission, question), below its rule. */
function dialogLines(dialog, rule) {
  const pointer = (index) => (index === dialog.selected ? '❯' : ' ');
  if (dialog.kind === 'permission') {
    const create = dialog.tool === 'Write';
    const dashes = '╌'.repeat(rule.length);
    return [
      create ? ' Create file' : ` ${dialog.tool} command`,
      ...(create ? [] : [' Tip: auto mode handles these prompts for you — choose "switch to auto mode" below']),
      '',
      create ? '' : ` ${dialog.description}`,
      dashes,
      ` ${dialog.subject}`,
      dashes,
      create ? ` Do you want to create ${dialog.subject.split('/').pop()}?` : ' Do you want to proceed?',
      ...permissionOptions(dialog).map((label, index) => ` ${pointer(index)} ${index + 1}. ${label}`),
      '',
      create ? ' Esc to cancel' : ' Esc to cancel · Tab to amend',
    ];
  }
  const choices = [...dialog.options.map((option) => option.label), dialog.typing === null ? 'Type something.' : dialog.typing];
  const lines = [` ☐ ${dialog.header}`, '', dialog.question, ''];
  choices.forEach((label, index) => {
    lines.push(`${pointer(index)} ${index + 1}. ${label}`);
    const description = dialog.options[index]?.description;
    if (description) lines.push(`     ${description}`);
  });
  lines.push(rule, `${pointer(choices.length)} ${choices.length + 1}. Chat about this`, '');
  lines.push('Enter to select · ↑/↓ to navigate · Esc to cancel');
  return lines;
}

/**
 * The options of a permission dialog. Bash, as 2.1.332 draws it: four, `3` allows too (and switches
 * to auto mode), `4` is No. A file's (`Write`) was not captured from 2.1.332; it keeps the older three.
 */
export function permissionOptions(dialog) {
  if (dialog.tool === 'Write') return ['Yes', 'Yes, allow all edits during this session (shift+tab)', 'No, and tell Claude what to do differently (esc)'];
  return ['Yes', `Yes, and always allow access to ${dialog.cwd} from this project`, 'Yes, and switch to auto mode · auto mode handles these prompts for you', 'No'];
}

/** The folder trust dialog, as 2.1.332 draws it: no numbers, `No, exit` first and under the cursor. */
function trustLines(dialog) {
  const pointer = (index) => (index === dialog.selected ? '❯' : ' ');
  return [
    ' Accessing workspace:',
    '',
    ` ${dialog.cwd}`,
    '',
    " Quick safety check: Is this a project you created or one you trust? (Like your own code, a well-known open source project, or work from your team). If not, take a moment to review what's in this folder first.",
    '',
    " Claude Code'll be able to read, edit, and execute files here.",
    '',
    ' Security guide',
    '',
    ` ${pointer(0)} No, exit`,
    ` ${pointer(1)} Yes, I trust this folder`,
    '',
    ' Enter to confirm · Esc to cancel',
  ];
}

/** Terminal output that draws `lines` from the top left, clearing what was there. */
function paint(lines, cols) {
  const body = lines.map((line) => `\x1b[2K${line}${width(line) % cols === 0 && line ? '' : '\x1b[K'}`).join('\r\n');
  return `\x1b[?25l\x1b[H${body}\x1b[J`;
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
