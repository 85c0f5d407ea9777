"""LangGraph's prebuilt ReAct agent with ``langchain-mcp-adapters`` tools and ``ChatOpenAI``;
the transcript is ``messages_to_dict(result["messages"])`` as JSON."""

import argparse
import asyncio
import json

from langchain_core.messages import messages_to_dict
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent


async def main(a: argparse.Namespace) -> None:
    client = MultiServerMCPClient({"mcpgym": {"url": a.mcp_url, "transport": "streamable_http"}})
    model = ChatOpenAI(model="scripted", base_url=a.model_url, api_key="scripted", max_retries=0)
    async with client.session("mcpgym") as session:
        from langchain_mcp_adapters.tools import load_mcp_tools

        tools = await load_mcp_tools(session)
        agent = create_react_agent(model, tools)
        result = await agent.ainvoke({"messages": [("user", a.instruction)]}, {"recursion_limit": 200})
    messages = result["messages"]
    with open(a.out, "w", encoding="utf-8") as fh:
        json.dump(messages_to_dict(messages), fh, indent=1, default=str)
    print(json.dumps({"final": str(messages[-1].content)}))


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    for opt in ("--mcp-url", "--model-url", "--instruction", "--out"):
        p.add_argument(opt, required=True)
    p.add_argument("--api", choices=["chat"], default="chat")
    asyncio.run(main(p.parse_args()))
