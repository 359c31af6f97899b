/**
 * Judges landing by patch as `git cherry` does, for many branches from one log of the repository: a
 * branch's commit has landed when a commit with the same patch id is on the target's side since the
 * two parted. Merges are ignored, as `git cherry` ignores them: what a merge carries is judged by
 * content (git.ts, `judgeLandings`). Pure: git.ts feeds it.
 */

/** Commit → parents, from `git log --format='%H %P'`. */
export type CommitGraph = Map<string, string[]>;

/** Parses `git log --format='%H %P'` output into a graph. */
export function parseLog(text: string): CommitGraph {
  const graph: CommitGraph = new Map();
  for (const line of text.split('\n')) {
    const [commit, ...parents] = line.trim().split(' ').filter(Boolean);
    if (commit) graph.set(commit, parents);
  }
  return graph;
}

/**
 * How many of the branch's commits (not on the target, merges aside) have a patch the target's side
 * lacks. 0 means landed. An empty commit carries `EMPTY_PATCH` and matches any empty commit on the
 * target's side, as in `git cherry`; a commit with no patch id at all counts as missing: keeping a
 * branch by mistake costs a deletion by hand, deleting one by mistake loses work.
 */
export function judgeLanding(graph: CommitGraph, patchIds: Map<string, string>, branchHead: string, targetHead: string): number {
  const fromBranch = reachable(graph, branchHead);
  const fromTarget = reachable(graph, targetHead);
  const upstream = new Set<string>();
  for (const commit of fromTarget) {
    if (fromBranch.has(commit) || isMerge(graph, commit)) continue;
    const id = patchIds.get(commit);
    if (id) upstream.add(id);
  }
  let missing = 0;
  for (const commit of fromBranch) {
    if (fromTarget.has(commit) || isMerge(graph, commit)) continue;
    const id = patchIds.get(commit);
    if (!id || !upstream.has(id)) missing++;
  }
  return missing;
}

/** The patch id of a commit that changes nothing: `git cherry` gives all such commits one id. */
export const EMPTY_PATCH = 'empty';

/**
 * The commits of `git log -p --format='commit %H'` output that change nothing (no `diff` section):
 * `git patch-id` prints no id for them, where `git cherry` matches them with each other.
 */
export function emptyCommits(patchText: string): string[] {
  const empty: string[] = [];
  let current: string | undefined;
  let changed = false;
  for (const line of patchText.split('\n')) {
    if (line.startsWith('commit ')) {
      if (current && !changed) empty.push(current);
      current = line.slice(7).trim();
      changed = false;
    } else if (line.startsWith('diff ')) changed = true;
  }
  if (current && !changed) empty.push(current);
  return empty;
}

function isMerge(graph: CommitGraph, commit: string): boolean {
  return (graph.get(commit)?.length ?? 0) > 1;
}

/** True when `commit` is `head` or one of its ancestors within the graph. */
export function reaches(graph: CommitGraph, head: string, commit: string): boolean {
  return reachable(graph, head).has(commit);
}

function reachable(graph: CommitGraph, head: string): Set<string> {
  const seen = new Set<string>();
  const stack = [head];
  while (stack.length) {
    const commit = stack.pop()!;
    if (seen.has(commit) || !graph.has(commit)) continue;
    seen.add(commit);
    stack.push(...graph.get(commit)!);
  }
  return seen;
}

/** What merging a branch into its target would do, in a few words: `merging it into main adds or changes b.txt`. */
export function contentWords(target: string, content: { paths: string[]; conflict: boolean }): string {
  const paths = content.paths.length > 3 ? `${content.paths.slice(0, 3).join(', ')} and ${content.paths.length - 3} more` : content.paths.join(', ');
  if (content.conflict) return `merging it into ${target} conflicts${paths ? ` in ${paths}` : ''}`;
  return `merging it into ${target} adds or changes ${paths || 'files'}`;
}
