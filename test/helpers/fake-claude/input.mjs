/**
 * Turns raw terminal input into events: `text` (typed characters), `paste` (a bracketed paste, its
 * CRs as newlines), and `key` (enter, backspace, ctrl-u, ctrl-c, esc, up, down, left, right, tab).
 * A sequence split across two reads is held until the rest arrives.
 */
const PASTE_START = '\x1b[200~';
const PASTE_END = '\x1b[201~';
const CSI_KEYS = { A: 'up', B: 'down', C: 'right', D: 'left' };
const CONTROL_KEYS = { '\r': 'enter', '\x7f': 'backspace', '\b': 'backspace', '\x15': 'ctrl-u', '\x03': 'ctrl-c', '\t': 'tab' };

/** Returns `feed(chunk)`, which calls `emit(event)` for each event in the chunk. */
export function createKeyReader(emit) {
  let held = '';
  let paste = null;
  return function feed(chunk) {
    const input = held + chunk;
    held = '';
    let text = '';
    const flushText = () => {
      if (text) emit({ type: 'text', text });
      text = '';
    };
    let i = 0;
    while (i < input.length) {
      if (paste !== null) {
        const end = input.indexOf(PASTE_END, i);
        if (end === -1) {
          const keep = partialSuffix(input, PASTE_END);
          paste += input.slice(i, input.length - keep);
          held = input.slice(input.length - keep);
          return;
        }
        emit({ type: 'paste', text: (paste + input.slice(i, end)).replace(/\r\n?/g, '\n') });
        paste = null;
        i = end + PASTE_END.length;
        continue;
      }
      const ch = input[i];
      if (ch === '\x1b') {
        flushText();
        const rest = input.slice(i);
        if (rest.startsWith(PASTE_START)) {
          paste = '';
          i += PASTE_START.length;
          continue;
        }
        const csi = /^\x1b\[([0-9;]*)([A-Za-z~])/.exec(rest);
        if (csi) {
          if (CSI_KEYS[csi[2]]) emit({ type: 'key', name: CSI_KEYS[csi[2]] });
          i += csi[0].length;
          continue;
        }
        if (rest.length > 1 && /^\x1b\[[0-9;]*$/.test(rest)) {
          held = rest;
          return;
        }
        emit({ type: 'key', name: 'esc' });
        i += 1;
        continue;
      }
      if (CONTROL_KEYS[ch]) {
        flushText();
        emit({ type: 'key', name: CONTROL_KEYS[ch] });
      } else if (ch === '\n' || ch >= ' ') text += ch;
      i += 1;
    }
    flushText();
  };
}

/** How many characters at the end of `input` could begin `marker`. */
function partialSuffix(input, marker) {
  for (let n = Math.min(marker.length - 1, input.length); n > 0; n--) {
    if (marker.startsWith(input.slice(-n))) return n;
  }
  return 0;
}
