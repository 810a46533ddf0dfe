"""Drives acc-mcp with the official Python MCP SDK client (mcp 2.3.0).

Usage: python py_roundtrip.py <acc-mcp> <workspace>
Alice connects in mode "auto" (server/discover, so 2026-07-28 if acc-mcp lists it); bob in
mode "legacy" (the initialize handshake). Prints one JSON report line; raises on any failed
expectation.
"""

import asyncio
import json
import os
import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters

ACC_MCP, WORKSPACE = sys.argv[1], sys.argv[2]
TOOLS = ["acc_status", "acc_sync", "acc_work", "acc_claim", "acc_release", "acc_message",
         "acc_request", "acc_inbox", "acc_reply", "acc_ack", "acc_finish"]


def params(participant):
    env = dict(os.environ, ACC_MCP_PARTICIPANT=participant, ACC_MCP_WORKSPACE=WORKSPACE)
    return StdioServerParameters(command=ACC_MCP, env=env)


async def main():
    async with Client(params("alice"), mode="auto") as alice, Client(params("bob"), mode="legacy") as bob:
        assert alice.protocol_version == "2026-07-28", alice.protocol_version
        assert bob.protocol_version == "2025-11-25", bob.protocol_version
        assert alice.server_info is not None and alice.server_info.name == "acc-mcp", alice.server_info
        names = [tool.name for tool in (await alice.list_tools()).tools]
        assert names == TOOLS, names
        assert [tool.name for tool in (await bob.list_tools()).tools] == TOOLS

        status = await bob.call_tool("acc_status", {})
        assert not status.is_error, status
        sent = await alice.call_tool("acc_message", {
            "to": ["bob"], "kind": "question", "subject": "which store?", "body": "sqlite or files?",
            "clientMessageId": "py-q1",
        })
        assert not sent.is_error, sent
        message_id = sent.structured_content["message"]["messageId"]
        retry = await alice.call_tool("acc_message", {
            "to": ["bob"], "kind": "question", "subject": "which store?", "body": "sqlite or files?",
            "clientMessageId": "py-q1",
        })
        assert retry.structured_content["message"]["messageId"] == message_id

        page = await bob.call_tool("acc_inbox", {})
        assert page.structured_content["items"][0]["messageId"] == message_id
        read = await bob.call_tool("acc_inbox", {"messageId": message_id})
        items = json.loads(read.content[0].text)
        assert read.structured_content == {"items": items}, "2025: the array as text, and as items in an object"
        assert items[0]["body"] == "sqlite or files?"
        reply = await bob.call_tool("acc_reply", {"messageId": message_id, "body": "sqlite"})
        assert reply.structured_content["receipt"]["state"] == "acknowledged"

        # One stateless 2026-07-28 exchange: the exact read returns a raw array in structuredContent.
        answer_page = await alice.call_tool("acc_inbox", {})
        answer_id = answer_page.structured_content["items"][0]["messageId"]
        exact = await alice.call_tool("acc_inbox", {"messageId": answer_id})
        assert isinstance(exact.structured_content, list), exact
        assert exact.structured_content[0]["body"] == "sqlite"
        assert exact.structured_content[0]["inReplyTo"] == message_id
        resources = [str(r.uri) for r in (await alice.list_resources()).resources]
        assert resources == ["acc://snapshot", "acc://roster", "acc://inbox"], resources
        roster = await alice.read_resource("acc://roster")
        participants = [p["participantId"] for p in json.loads(roster.contents[0].text)["participants"]]
        assert participants == ["alice", "bob"], participants
        bad = await alice.call_tool("acc_release", {"all": True, "claimId": "claim_x"})
        assert bad.is_error and bad.structured_content["error"]["code"] == "invalid_arguments", bad

    print(json.dumps({"ok": True, "modern": "2026-07-28", "legacy": "2025-11-25", "messageId": message_id}))


asyncio.run(main())
