// Drives acc-mcp with the official TypeScript MCP SDK client (@modelcontextprotocol/sdk).
// Usage: node ts_roundtrip.mjs <acc-mcp> <workspace> <2025-06-18|2025-11-25>
// Env: ACC_TS_SDK = the SDK package directory. Prints one JSON report line; exits non-zero
// on any failed expectation.
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [accMcp, workspace, version] = process.argv.slice(2);
const sdk = process.env.ACC_TS_SDK;
const load = (rel) => import(pathToFileURL(path.join(sdk, 'dist/esm', rel)).href);
const { Client } = await load('client/index.js');
const { StdioClientTransport } = await load('client/stdio.js');

const seen = [];
async function connect(participant) {
  const transport = new StdioClientTransport({
    command: accMcp,
    env: { ...process.env, ACC_MCP_PARTICIPANT: participant, ACC_MCP_WORKSPACE: workspace },
    stderr: 'inherit',
  });
  // The SDK always offers its latest revision; to exercise 2025-06-18 rewrite only the offer
  // and let the SDK proceed with whatever the server negotiates.
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (message.method === 'initialize') {
      message = { ...message, params: { ...message.params, protocolVersion: version } };
    }
    return send(message, options);
  };
  let handler;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    set(h) { handler = h; },
    get() { return handler && ((message, extra) => { seen.push(message); return handler(message, extra); }); },
  });
  const client = new Client({ name: 'acc-interop-ts', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  return client;
}

const call = async (client, name, args) => {
  const result = await client.callTool({ name, arguments: args });
  return result;
};

const alice = await connect('alice');
const bob = await connect('bob');
const negotiated = seen.filter((m) => m.result && m.result.protocolVersion).map((m) => m.result.protocolVersion);
assert.deepEqual(negotiated, [version, version]);
assert.deepEqual(alice.getServerCapabilities(), { tools: {}, resources: {} });

const tools = (await alice.listTools()).tools.map((t) => t.name);
assert.deepEqual(tools, ['acc_status', 'acc_sync', 'acc_work', 'acc_claim', 'acc_release', 'acc_message', 'acc_request', 'acc_inbox', 'acc_reply', 'acc_ack', 'acc_finish']);

// bob must be known before alice can address him: his first call resolves his session.
const status = await call(bob, 'acc_status', {});
assert.equal(status.isError, undefined);
const request = await call(alice, 'acc_request', { toParticipantId: 'bob', title: 'review the parser', detail: 'see src/parse.rs' });
assert.notEqual(request.isError, true, JSON.stringify(request));
const requestId = request.structuredContent.message.messageId;
assert.equal(request.structuredContent.delivery[0].recipientParticipantId, 'bob');
assert.equal(JSON.parse(request.content[0].text).message.messageId, requestId);

const inbox = await call(bob, 'acc_inbox', {});
assert.equal(inbox.structuredContent.items[0].messageId, requestId);
assert.equal(inbox.structuredContent.items[0].receipt.state, 'queued');
assert.equal(inbox.structuredContent.items[0].body, undefined);

const read = await call(bob, 'acc_inbox', { messageId: requestId });
const readItems = JSON.parse(read.content[0].text);
assert.deepEqual(read.structuredContent, { items: readItems }, '2025: the array as text, and as items in an object');
assert.equal(readItems[0].body, 'see src/parse.rs');
assert.equal(readItems[0].receipt.state, 'retrieved');

const refused = await call(bob, 'acc_ack', { messageId: requestId });
assert.equal(refused.isError, true);
assert.equal(refused.structuredContent.error.code, 'reply_required');

const reply = await call(bob, 'acc_reply', { messageId: requestId, body: 'looks fine' });
assert.equal(reply.structuredContent.receipt.state, 'acknowledged');
assert.equal(reply.structuredContent.message.threadId, requestId);
const answer = await call(alice, 'acc_inbox', {});
assert.equal(answer.structuredContent.items[0].inReplyTo, requestId);

const claim = await call(alice, 'acc_claim', { action: 'acquire', resource: 'file:src/parse.rs' });
assert.equal(claim.structuredContent.resource, 'file:src/parse.rs');
const conflict = await call(bob, 'acc_claim', { action: 'acquire', resources: ['file:src/parse.rs'] });
assert.equal(conflict.isError, true);
assert.equal(conflict.structuredContent.error.code, 'claim_conflict');
assert.equal(conflict.structuredContent.error.details.conflicts[0].claims[0].ownerParticipantId, 'alice');

const bad = await call(alice, 'acc_claim', { action: 'acquire', resource: 'file:src/', extra: 1 });
assert.equal(bad.isError, true);
assert.equal(bad.structuredContent.error.code, 'invalid_arguments');

const resources = (await bob.listResources()).resources.map((r) => r.uri);
assert.deepEqual(resources, ['acc://snapshot', 'acc://roster', 'acc://inbox']);
const inboxResource = await bob.readResource({ uri: 'acc://inbox' });
assert.deepEqual(JSON.parse(inboxResource.contents[0].text).items, []);

await alice.close();
await bob.close();
console.log(JSON.stringify({ ok: true, negotiated, tools: tools.length, requestId }));
