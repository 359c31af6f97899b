/**
 * The cgroup folder's name for a project's test file (test/helpers/file-cgroup.ts): flat, one per file
 * and project. Plain JavaScript, so scripts/flakes.mjs reads the same names.
 * @param {string} project
 * @param {string} file
 */
export function cgroupName(project, file) {
  return `${project}__${file}`.replace(/[^A-Za-z0-9._-]/g, '_');
}
