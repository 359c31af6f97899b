// Compares V8 heap snapshots (bench/supervisor-memory.bench.mjs MEM_SNAPSHOTS writes them): object
// counts and self sizes by constructor, the later minus the earlier, largest growth first.
//
//   node bench/heap-count.mjs early.heapsnapshot late.heapsnapshot [--top 30]
//   node bench/heap-count.mjs late.heapsnapshot --grep 'fix--s1[0-9]\b' [--chains 5]
//
// --grep REGEX lists the strings matching it that the heap still holds, and for a few of them the
// chain of what retains them (nearest first): which map, array or closure keeps a place's name after
// the place is gone.
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const at = args.indexOf(name);
  if (at < 0) return fallback;
  const value = args[at + 1];
  args.splice(at, 2);
  return value;
};
const top = Number(flag('--top', 30));
const grep = flag('--grep', undefined);
const chains = Number(flag('--chains', 5));
const files = args;

function load(file) {
  const snap = JSON.parse(readFileSync(file, 'utf8'));
  const meta = snap.snapshot.meta;
  const nodeFields = meta.node_fields;
  const edgeFields = meta.edge_fields;
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const N = nodeFields.length;
  const E = edgeFields.length;
  const f = (name) => nodeFields.indexOf(name);
  const [TYPE, NAME, ID, SIZE, EDGES] = ['type', 'name', 'id', 'self_size', 'edge_count'].map(f);
  const [ETYPE, ENAME, ETO] = ['type', 'name_or_index', 'to_node'].map((n) => edgeFields.indexOf(n));
  return { snap, nodes: snap.nodes, edges: snap.edges, strings: snap.strings, nodeTypes, edgeTypes, N, E, TYPE, NAME, ID, SIZE, EDGES, ETYPE, ENAME, ETO };
}

function counts(h) {
  const byName = new Map();
  for (let i = 0; i < h.nodes.length; i += h.N) {
    const type = h.nodeTypes[h.nodes[i + h.TYPE]];
    const name = type === 'object' || type === 'closure' || type === 'native' ? h.strings[h.nodes[i + h.NAME]] : `(${type})`;
    const key = `${type === 'closure' ? 'closure ' : ''}${name}`;
    const row = byName.get(key) ?? { count: 0, size: 0 };
    row.count++;
    row.size += h.nodes[i + h.SIZE];
    byName.set(key, row);
  }
  return byName;
}

function describe(h, node) {
  const type = h.nodeTypes[h.nodes[node + h.TYPE]];
  let name = h.strings[h.nodes[node + h.NAME]];
  if (name.length > 80) name = `${name.slice(0, 77)}...`;
  return `${type} ${JSON.stringify(name)} @${h.nodes[node + h.ID]}`;
}

function retainers(h) {
  const owners = new Map();
  let edge = 0;
  for (let node = 0; node < h.nodes.length; node += h.N) {
    const count = h.nodes[node + h.EDGES];
    for (let k = 0; k < count; k++, edge += h.E) {
      const type = h.edgeTypes[h.edges[edge + h.ETYPE]];
      if (type === 'weak') continue;
      const to = h.edges[edge + h.ETO];
      const label = type === 'element' || type === 'hidden' ? `[${h.edges[edge + h.ENAME]}]` : h.strings[h.edges[edge + h.ENAME]];
      if (!owners.has(to)) owners.set(to, []);
      owners.get(to).push({ from: node, label, type });
    }
  }
  return owners;
}

if (grep) {
  const h = load(files[0]);
  const re = new RegExp(grep);
  const found = [];
  for (let i = 0; i < h.nodes.length; i += h.N) {
    const type = h.nodeTypes[h.nodes[i + h.TYPE]];
    if ((type === 'string' || type === 'concatenated string' || type === 'sliced string') && re.test(h.strings[h.nodes[i + h.NAME]])) found.push(i);
  }
  console.log(`${files[0]}: ${found.length} strings match /${grep}/`);
  const owners = retainers(h);
  for (const node of found.slice(0, chains)) {
    console.log(`\n${describe(h, node)}`);
    let at = node;
    const seen = new Set([at]);
    for (let depth = 0; depth < 14; depth++) {
      const by = (owners.get(at) ?? []).filter((o) => !seen.has(o.from));
      if (!by.length) break;
      // The first retainer that is not a system cache, if any.
      const pick = by.find((o) => !/^\(|system \/|synthetic/.test(describe(h, o.from))) ?? by[0];
      console.log(`${'  '.repeat(depth + 1)}<- .${pick.label} of ${describe(h, pick.from)}${by.length > 1 ? ` (+${by.length - 1} more retainers)` : ''}`);
      seen.add(pick.from);
      at = pick.from;
    }
  }
} else {
  const [a, b] = files.map((file) => counts(load(file)));
  const rows = [...new Set([...a.keys(), ...b.keys()])].map((key) => {
    const x = a.get(key) ?? { count: 0, size: 0 };
    const y = b.get(key) ?? { count: 0, size: 0 };
    return { key, count: y.count - x.count, size: y.size - x.size, before: x.count, after: y.count };
  });
  const total = (m) => [...m.values()].reduce((s, r) => s + r.size, 0);
  console.log(`heap self size: ${(total(a) / 1e6).toFixed(1)} MB -> ${(total(b) / 1e6).toFixed(1)} MB`);
  console.log('by self size growth:');
  for (const r of rows.sort((p, q) => q.size - p.size).slice(0, top)) console.log(`  ${(r.size / 1024).toFixed(0).padStart(8)} KB  ${String(r.count).padStart(7)} objects (${r.before} -> ${r.after})  ${r.key}`);
  console.log('by count growth:');
  for (const r of rows.sort((p, q) => q.count - p.count).slice(0, top)) console.log(`  ${String(r.count).padStart(7)} objects (${r.before} -> ${r.after})  ${(r.size / 1024).toFixed(0).padStart(8)} KB  ${r.key}`);
}
