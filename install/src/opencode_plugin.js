// ACC's plugin for OpenCode, written by `acc install --client opencode`. acc owns this file by
// its content: `acc uninstall` removes it while it is exactly as acc wrote it, and leaves it to
// you once you edit it. It runs `acc hook opencode <event>` (Claude Code's hook shapes) at a
// session's start, for each user message (what waits for the session goes into that message,
// fenced as untrusted peer text), before each tool call (ACC's write guard), when a turn ends and
// when OpenCode exits. Every failure fails open: OpenCode carries on as if ACC were not there.
import { spawn } from "node:child_process";

const ACC = __ACC_PATH__;
// acc's hook answers within 4.5 s; it is stopped after this.
const BUDGET_MS = 6000;

/** Run one hook; its JSON answer, or null (no answer, not JSON, failed, too slow). */
function hook(event, payload) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn(ACC, ["hook", "opencode", event], { stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      resolve(null);
      return;
    }
    const timer = setTimeout(() => child.kill("SIGKILL"), BUDGET_MS);
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.on("error", () => {
      clearTimeout(timer);
      resolve(null);
    });
    child.on("close", () => {
      clearTimeout(timer);
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

export const AccPlugin = async ({ client, directory }) => {
  const loaded = Date.now();
  // OpenCode session id -> its top-level session (a subagent's session has a parent: it is the
  // same agent for ACC, with the same claims).
  const roots = new Map();
  // Top-level session id -> the promise of its SessionStart context.
  const started = new Map();

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
        hook("SessionStart", { session_id: root.id, cwd: directory, source }).then(context),
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
