"""A LangGraph graph whose long-term memory is Morphz (`MorphzStore`), remembering across
threads. Runs offline: the model is a scripted stand-in (swap in any LangChain chat model).

Run with the server up (`./dev run`) and a context token:
    MORPHZ_TOKEN=mz_... python client/examples/langgraph_memory.py
"""

import os
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.base import BaseStore
from morphz_client import MorphzClient
from morphz_client.langgraph import MorphzStore

model = FakeListChatModel(responses=["Noted.", "You told me: your name is Ada."])


def respond(state: MessagesState, config: RunnableConfig, *, store: BaseStore) -> Any:
    namespace = ("memories", config["configurable"]["user_id"])
    said = str(state["messages"][-1].content)
    if said.startswith("remember "):
        store.put(namespace, f"fact-{len(store.search(namespace))}", {"fact": said[9:]})
    facts = "; ".join(item.value["fact"] for item in store.search(namespace))
    return {"messages": [model.invoke([SystemMessage(f"Memories: {facts}"), *state["messages"]])]}


url = os.environ.get("MORPHZ_URL", "http://127.0.0.1:8000")
with MorphzClient(url, os.environ["MORPHZ_TOKEN"], context=os.environ.get("MORPHZ_CONTEXT")) as mz:
    builder = StateGraph(MessagesState)
    builder.add_node("respond", respond)
    builder.add_edge(START, "respond")
    graph = builder.compile(checkpointer=InMemorySaver(), store=MorphzStore(mz))
    for thread, text in [("monday", "remember my name is Ada"), ("tuesday", "who am I?")]:
        config: RunnableConfig = {"configurable": {"thread_id": thread, "user_id": "ada"}}
        reply = graph.invoke({"messages": [HumanMessage(text)]}, config)["messages"][-1].content
        print(f"[{thread}] {text!r} -> {reply!r}")
    print("stored:", [item.value for item in MorphzStore(mz).search(("memories", "ada"))])
