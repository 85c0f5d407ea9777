"""The OpenAI Agents SDK (``openai-agents``) over Chat Completions or Responses, its MCP tools
from ``MCPServerStreamableHttp``; the transcript is ``result.to_input_list()`` as JSON."""

import argparse
import asyncio
import json

from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, set_tracing_disabled
from agents.mcp import MCPServerStreamableHttp
from openai import AsyncOpenAI


async def main(a: argparse.Namespace) -> None:
    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=a.model_url, api_key="scripted", max_retries=0)
    model = (
        OpenAIChatCompletionsModel(model="scripted", openai_client=client)
        if a.api == "chat"
        else OpenAIResponsesModel(model="scripted", openai_client=client)
    )
    async with MCPServerStreamableHttp(
        params={"url": a.mcp_url, "timeout": 30}, cache_tools_list=True, client_session_timeout_seconds=30
    ) as server:
        agent = Agent(name="assistant", instructions="Use the tools to do the task.", model=model, mcp_servers=[server])
        result = await Runner.run(agent, a.instruction, max_turns=80)
    with open(a.out, "w", encoding="utf-8") as fh:
        json.dump(result.to_input_list(), fh, indent=1, default=str)
    print(json.dumps({"final": str(result.final_output)}))


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    for opt in ("--mcp-url", "--model-url", "--instruction", "--out"):
        p.add_argument(opt, required=True)
    p.add_argument("--api", choices=["chat", "responses"], default="chat")
    asyncio.run(main(p.parse_args()))
