// The CLI checks its arguments before it connects to Temporal: bad input is exit 2 with the problem
// (and the usage for a bad command), and not one connection is opened, as the README promises.
// TEMPORAL_ADDRESS points at a listener that counts the connections made to it and answers none.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';

const CLI = resolve(__dirname, '../src/cli/main.js');

let listener: Server;
let connections = 0;
const sockets = new Set<Socket>();

before(async () => {
  listener = createServer((socket) => {
    connections++;
    sockets.add(socket);
  });
  await new Promise<void>((done) => listener.listen(0, '127.0.0.1', done));
});
after(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((done) => listener.close(done));
});

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { port } = listener.address() as AddressInfo;
  const env = { ...process.env, TEMPORAL_ADDRESS: `127.0.0.1:${port}`, TEMPORAL_NAMESPACE: 'default' };
  return new Promise((done) => {
    execFile(process.execPath, [CLI, ...args], { env, timeout: 30_000 }, (err, stdout, stderr) =>
      done({ code: err ? Number((err as { code?: unknown }).code) : 0, stdout, stderr }),
    );
  });
}

describe('bad arguments: exit 2, nothing sent, whether or not Temporal answers', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['start without --project', ['start', '--instruction', 'Open example.com', '--country', 'US'], /project must be/],
    [
      'start with a three-letter country',
      ['start', '--instruction', 'x', '--project', 'p', '--country', 'USA'],
      /ISO 3166-1 alpha-2 code .*"USA"/,
    ],
    ['an unknown command, with the usage', ['frobnicate'], /unknown command "frobnicate"\n\nUsage:/],
    ['a code below the minimum', ['submit-code', 'wf-1', '12'], /code must have at least 4 letters or digits/],
    ['append without an instruction', ['append', 'wf-1'], /give at least one --instruction/],
    ['state without a workflow ID', ['state'], /state needs a WORKFLOW_ID/],
    ['an unknown schedule command', ['schedule', 'frob'], /unknown command "schedule frob"/],
    [
      'a saved task without a project',
      ['saved-task', 'create', '--name', 'n', '--instruction', 'x'],
      /project must be/,
    ],
    ['a schedule with a bad cron', ['schedule', 'create', 'n', '--cron', 'every day'], /cron/i],
  ];
  for (const [what, args, message] of cases) {
    test(what, async () => {
      const before = connections;
      const { code, stderr } = await cli(...args);
      assert.equal(code, 2, stderr);
      assert.match(stderr, message);
      assert.doesNotMatch(stderr, /Cannot reach Temporal/);
      assert.equal(connections, before, 'a connection to Temporal was opened');
    });
  }
});
