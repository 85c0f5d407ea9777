"""pydantic-ai with its MCP client (``MCPToolset`` over streamable HTTP) and its OpenAI chat
model; the transcript is ``ModelMessagesTypeAdapter.dump_json(result.all_messages())``."""

import argparse
import asyncio
import json

from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider


async def main(a: argparse.Namespace) -> None:
    model = OpenAIChatModel("scripted", provider=OpenAIProvider(base_url=a.model_url, api_key="scripted"))
    toolset = MCPToolset(a.mcp_url, max_retries=20)
    agent = Agent(model, toolsets=[toolset], instructions="Use the tools to do the task.")
    async with agent:
        result = await agent.run(a.instruction)
    with open(a.out, "wb") as fh:
        fh.write(ModelMessagesTypeAdapter.dump_json(result.all_messages(), indent=1))
    print(json.dumps({"final": str(result.output)}))


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    for opt in ("--mcp-url", "--model-url", "--instruction", "--out"):
        p.add_argument(opt, required=True)
    p.add_argument("--api", choices=["chat"], default="chat")
    asyncio.run(main(p.parse_args()))
