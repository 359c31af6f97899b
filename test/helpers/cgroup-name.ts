/** The cgroup folder's name for a project's test file (test/helpers/file-cgroup.ts): flat, one per file and project. */
export function cgroupName(project: string, file: string): string {
  return `${project}__${file}`.replace(/[^A-Za-z0-9._-]/g, '_');
}
