// ACC's plugin for OpenCode, written by `acc install --client opencode`. acc owns this file by
// its content: `acc uninstall` removes it while it is exactly as acc wrote it, and leaves it to
// you once you edit it. It runs `acc hook opencode <event>` (Claude Code's hook shapes) at a
// session's start, for each user message (what waits for the session goes into that message,
// fenced as untrusted peer text), before each tool call (ACC's write guard), when a turn ends and
// when OpenCode exits. Every failure fails open: OpenCode carries on as if ACC were not there.
// With live delivery consented at install time, ACC wakes an idle session of the terminal
// interface (never a scripted `opencode run`) through a socket this plugin listens on (opened
// only once a session's SessionStart answer carries that consent; without it, none), private
// to you (`acc-opencode-<uid>/<pid>.sock` in the temp folder, or in /tmp when the temp folder's
// path is too long for a socket): one line of ACC's own text, sent into the session as a user
// message; the message's body follows through the UserPromptSubmit hook of that very message.
// What ACC's hooks say on the side (no live delivery for this session, a hook that failed open)
// goes to OpenCode's log, and in the terminal interface shows as a warning, once per text.
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

const ACC = __ACC_PATH__;
// acc's hook answers within 4.5 s; it is stopped after this.
const BUDGET_MS = 6000;

// The socket the wakes come through, once it listens (hooks name it to ACC), else null.
let wakeSocket = null;
// Why the terminal interface could not listen for wakes (hooks name it to ACC), else null.
let wakeUnavailable = null;
// Shows a hook's note to the user (set once the plugin has OpenCode's client).
let tell = () => {};
// The most of a hook's notes read.
const MAX_NOTES = 4096;
// Largest wake request read, and the longest wake text taken.
const MAX_WAKE = 4096;
const MAX_TEXT = 512;

/** Run one hook; its JSON answer, or null (no answer, not JSON, failed, too slow). */
function hook(event, payload) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      const env = { ...process.env };
      if (wakeSocket) env.ACC_OPENCODE_WAKE_SOCKET = wakeSocket;
      if (wakeUnavailable) env.ACC_OPENCODE_WAKE_UNAVAILABLE = wakeUnavailable;
      child = spawn(ACC, ["hook", "opencode", event], { stdio: ["pipe", "pipe", "pipe"], env });
    } catch {
      resolve(null);
      return;
    }
    const timer = setTimeout(() => child.kill("SIGKILL"), BUDGET_MS);
    let notes = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr.on("data", (chunk) => {
      if (notes.length < MAX_NOTES) notes += chunk;
    });
    child.on("error", () => {
      clearTimeout(timer);
      resolve(null);
    });
    child.on("close", () => {
      clearTimeout(timer);
      for (const line of notes.slice(0, MAX_NOTES).split("\n")) {
        if (line.startsWith("acc hook: ")) tell(line.slice("acc hook: ".length));
      }
      try {
        resolve(out.trim() ? JSON.parse(out) : null);
      } catch {
        resolve(null);
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify({ ...payload, hook_event_name: event }));
  });
}

/** The context a hook answered with, or "". */
function context(answer) {
  const text = answer?.hookSpecificOutput?.additionalContext;
  return typeof text === "string" ? text : "";
}

/** A folder only you can enter, or null: made 0700 if absent, refused if anyone else's. */
function privateFolder(dir) {
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch {}
  try {
    const stat = fs.lstatSync(dir);
    const mine = stat.isDirectory() && stat.uid === process.getuid() && (stat.mode & 0o077) === 0;
    return mine ? dir : null;
  } catch {
    return null;
  }
}

// The longest path a Unix socket can have on Linux (`sun_path` holds 108 bytes with its NUL).
const SOCKET_PATH_MAX = 107;

/**
 * The private folder this process's wake socket goes in, as `{ dir }`: `acc-opencode-<uid>` in
 * the temp folder, or in /tmp when the temp folder's path is too long for the socket (about 80
 * characters and more; listening there would fail) and /tmp's is not. `{ why }` when neither
 * can be.
 */
function socketFolder() {
  const name = `acc-opencode-${process.getuid()}`;
  for (const base of [os.tmpdir(), "/tmp"]) {
    const dir = path.join(base, name);
    if (Buffer.byteLength(path.join(dir, `${process.pid}.sock`)) <= SOCKET_PATH_MAX) {
      return privateFolder(dir)
        ? { dir }
        : { why: `${dir} must be a folder only you can enter, not a file, a link or a folder others can enter` };
    }
  }
  return { why: `a socket's path under the temporary folder ${os.tmpdir()} and under /tmp would be too long` };
}

/**
 * Remove the sockets in `dir` of OpenCode processes that no longer run (one killed, not quit,
 * leaves its socket behind). A pid that runs keeps its socket, whoever it is: ACC's adapter asks
 * the plugin on a socket for its pid before it trusts it.
 */
function sweepStale(dir) {
  let names = [];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const match = /^([0-9]{1,10})\.sock$/.exec(name);
    if (!match || Number(match[1]) === process.pid) continue;
    try {
      process.kill(Number(match[1]), 0);
    } catch (error) {
      if (error?.code !== "ESRCH") continue;
      try {
        fs.unlinkSync(path.join(dir, name));
      } catch {}
    }
  }
}

/** Whether this is OpenCode's terminal interface (its plugins run in its worker). */
function inTerminal() {
  return String(process.argv[1] ?? "").endsWith("/cli/tui/worker.js");
}

/**
 * Listen for wakes: `{ file }` once listening, `{ why }` when the terminal interface cannot, and
 * `{}` in a scripted run, which is never woken. A connection carries one JSON request line and gets one JSON answer line:
 * `{"type": "hello", "sessionId"?}` answers this process's pid, the OpenCode version the session
 * records and the top-level sessions met here; `{"type": "wake", "sessionId", "messageId",
 * "text"}` sends the text (one printable line) into that session as a user message, once per
 * message id. Anything else is refused; nothing a request says runs anything else.
 */
function listenForWakes(client, known) {
  // Only OpenCode's terminal interface is woken (its plugins run in its worker); a scripted
  // `opencode run` ends with its turn and is never given one more.
  if (!inTerminal()) return Promise.resolve({});
  const { dir, why } = socketFolder();
  if (!dir) return Promise.resolve({ why });
  sweepStale(dir);
  const file = path.join(dir, `${process.pid}.sock`);
  const woken = new Set();
  const answer = async (request) => {
    const isObject = request !== null && typeof request === "object" && !Array.isArray(request);
    const type = isObject ? request.type : undefined;
    if (type !== "hello" && type !== "wake") return { ok: false, code: "bad_request" };
    const id = request.sessionId;
    if (type === "hello") {
      if (id === undefined) return { ok: true, pid: process.pid, sessions: [...known.keys()] };
      if (!known.has(id)) return { ok: false, code: "unknown_session" };
      const info = await client.session.get({ path: { id } });
      return { ok: true, pid: process.pid, sessionId: id, version: info?.data?.version ?? null };
    }
    if (!known.has(id)) return { ok: false, code: "unknown_session" };
    const { messageId, text } = request;
    if (typeof messageId !== "string" || !/^[A-Za-z0-9_-]{1,128}$/.test(messageId)) {
      return { ok: false, code: "bad_request" };
    }
    if (typeof text !== "string" || text.length > MAX_TEXT || !/^[\x20-\x7e]+$/.test(text)) {
      return { ok: false, code: "bad_request" };
    }
    if (woken.has(messageId)) return { ok: true, duplicate: true };
    woken.add(messageId);
    const sent = await client.session.promptAsync({
      path: { id },
      body: { parts: [{ type: "text", text }] },
    });
    const status = sent?.response?.status ?? 0;
    if (status >= 200 && status < 300) return { ok: true };
    woken.delete(messageId);
    return { ok: false, code: "recipient_unavailable" };
  };
  // One request line per connection; the answer line, then the connection ends. (Bun, which
  // runs OpenCode, closes a half-closed socket, so the request ends at its newline.)
  const server = net.createServer((socket) => {
    let input = "";
    let taken = false;
    socket.setEncoding("utf8");
    socket.setTimeout(2000, () => socket.destroy());
    socket.on("error", () => {});
    socket.on("data", async (chunk) => {
      if (taken) return;
      input += chunk;
      const end = input.indexOf("\n");
      if (end < 0) {
        if (input.length > MAX_WAKE) socket.destroy();
        return;
      }
      taken = true;
      let reply;
      try {
        reply = await answer(JSON.parse(input.slice(0, end)));
      } catch {
        reply = { ok: false, code: "bad_request" };
      }
      socket.end(`${JSON.stringify(reply)}\n`);
    });
  });
  return new Promise((resolve) => {
    server.on("error", (error) => resolve({ why: `listening on ${file} failed: ${error?.message ?? error}` }));
    try {
      fs.unlinkSync(file);
    } catch {}
    server.listen(file, () => {
      try {
        fs.chmodSync(file, 0o600);
      } catch (error) {
        server.close();
        resolve({ why: `${file} could not be made private: ${error?.message ?? error}` });
        return;
      }
      server.unref();
      process.on("exit", () => {
        try {
          fs.unlinkSync(file);
        } catch {}
      });
      resolve({ file });
    });
  });
}

export const AccPlugin = async ({ client, directory }) => {
  const loaded = Date.now();
  // OpenCode session id -> its top-level session (a subagent's session has a parent: it is the
  // same agent for ACC, with the same claims).
  const roots = new Map();
  // Top-level session id -> the promise of its SessionStart context.
  const started = new Map();
  const told = new Set();
  tell = (note) => {
    if (!note || told.has(note)) return;
    told.add(note);
    const message = `ACC: ${note}`;
    // Neither waits: a note never holds up the turn, and one that cannot be shown is dropped.
    const quietly = (send) => {
      try {
        Promise.resolve(send()).catch(() => {});
      } catch {}
    };
    quietly(() => client.app.log({ body: { service: "acc", level: "warn", message } }));
    if (inTerminal()) {
      quietly(() =>
        client.tui.showToast({ body: { title: "ACC", message, variant: "warning", duration: 15000 } }),
      );
    }
  };
  // The wake socket opens once per process, and only after a SessionStart answer says the user
  // consented to live delivery (`accLiveDelivery`): without consent no socket ever exists.
  let listening = null;
  const listenOnce = () => {
    listening ??= listenForWakes(client, started).then(({ file, why }) => {
      wakeSocket = file ?? null;
      wakeUnavailable = why ?? null;
    });
    return listening;
  };
  const consented = (answer) => ["actionable", "all"].includes(answer?.accLiveDelivery);

  const info = async (id) => {
    try {
      const answer = await client.session.get({ path: { id } });
      return answer?.data ?? null;
    } catch {
      return null;
    }
  };
  const rootOf = (id) => {
    if (!roots.has(id)) {
      roots.set(
        id,
        (async () => {
          let current = id;
          for (let depth = 0; depth < 8; depth++) {
            const session = await info(current);
            if (!session?.parentID) return { id: current, created: session?.time?.created };
            current = session.parentID;
          }
          return { id: current, created: undefined };
        })(),
      );
    }
    return roots.get(id);
  };
  // A session created before this OpenCode process started is a resumed one.
  const start = async (id) => {
    const root = await rootOf(id);
    if (!started.has(root.id)) {
      const source = typeof root.created === "number" && root.created >= loaded ? "startup" : "resume";
      started.set(
        root.id,
        (async () => {
          const answer = await hook("SessionStart", { session_id: root.id, cwd: directory, source });
          // Consent, in the terminal interface: listen, then have ACC bind this session to the
          // socket (or say why there is none).
          if (consented(answer) && inTerminal()) {
            await listenOnce();
            await hook("LiveDelivery", { session_id: root.id, cwd: directory });
          }
          return context(answer);
        })(),
      );
    }
    return { root: root.id, intro: await started.get(root.id) };
  };

  return {
    // ACC's introduction (who is here, how to answer) goes with every model request.
    "experimental.chat.system.transform": async (input, output) => {
      if (!input?.sessionID) return;
      try {
        const { intro } = await start(input.sessionID);
        if (intro) output.system.push(intro);
      } catch {}
    },
    // What waits for the session goes into the user's message, so it reaches this turn's model
    // request and stays in the conversation once (a resumed session does not get it again).
    "chat.message": async (input, output) => {
      try {
        const { root } = await start(input.sessionID);
        const prompt = output.parts
          .filter((part) => part.type === "text")
          .map((part) => part.text)
          .join("\n");
        const text = context(
          await hook("UserPromptSubmit", { session_id: root, cwd: directory, prompt }),
        );
        const last = output.parts[output.parts.length - 1];
        if (!text || !last) return;
        output.parts.push({
          id: `${last.id}acc`,
          sessionID: last.sessionID,
          messageID: last.messageID,
          type: "text",
          text,
          synthetic: true,
        });
      } catch {}
    },
    // ACC's write guard: a refusal stops the tool, and the model gets the reason as its result.
    "tool.execute.before": async (input, output) => {
      let answer = null;
      try {
        const { root } = await start(input.sessionID);
        answer = await hook("PreToolUse", {
          session_id: root,
          cwd: directory,
          tool_name: input.tool,
          tool_input: output.args,
        });
      } catch {}
      const decision = answer?.hookSpecificOutput;
      if (decision?.permissionDecision === "deny") {
        throw new Error(decision.permissionDecisionReason || "ACC refused this write");
      }
    },
    event: async ({ event }) => {
      try {
        const id = event?.properties?.sessionID;
        if (event?.type === "session.idle" && id) {
          const { root } = await start(id);
          await hook("Stop", { session_id: root, cwd: directory });
        }
      } catch {}
    },
    dispose: async () => {
      try {
        await Promise.all(
          [...started.keys()].map((id) => hook("SessionEnd", { session_id: id, cwd: directory })),
        );
      } catch {}
    },
  };
};
