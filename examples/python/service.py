"""A Python service that runs a BrowserAI task through browserai-temporal's workers.

It starts ``browserTask`` by name on the workers' task queue and learns that the task needs a
one-time code from the ``nextInputRequest`` update: one call per input request (one billed Temporal
action, however long it waits; the workflow answers when BrowserAI asks). It reads the code from
stdin (where a real service would take it from its user or an inbox), sends it with the
``submitCode`` signal, and asks again: BrowserAI may refuse the code and ask for another, which is
a new request. At the end it prints the result, or the typed failure: ``InvalidInput`` (refused
before anything was sent) or ``BrowserAITaskFailed`` (BrowserAI ran the task and it failed). Each
step is one JSON line on stdout.

    TEMPORAL_ADDRESS=localhost:7233 TEMPORAL_TASK_QUEUE=browserai \\
      python service.py --instructions "Log in to the portal and download the latest invoice"

TEMPORAL_NAMESPACE picks the namespace; TEMPORAL_PAYLOAD_KEY (and _KEY_ID, _DECRYPT_KEYS)
encrypts payloads with the key the workers use.
"""

import argparse
import asyncio
import json
import os
import sys
import uuid

from temporalio.client import Client, WorkflowFailureError, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError

from browserai_codec import data_converter_from_env
from browserai_contract import (
    BROWSER_AI_TASK_FAILED,
    BROWSER_TASK,
    COMPLETE_SIGNAL,
    INVALID_INPUT,
    NEXT_INPUT_REQUEST_UPDATE,
    SUBMIT_CODE_SIGNAL,
    BrowserTaskInput,
    BrowserTaskResult,
    CodeMessage,
    InputRequestWait,
    InvalidInputDetails,
    NextInputRequestMessage,
)


def say(event: str, **fields) -> None:
    print(json.dumps({"event": event, **fields}), flush=True)


async def read_code() -> str:
    """Where your service gets the code: a user prompt, an SMS or e-mail inbox. Here: stdin."""
    return (await asyncio.to_thread(sys.stdin.readline)).strip()


async def answer_input_requests(handle: WorkflowHandle, result: asyncio.Task) -> None:
    """Until the task finishes, wait for its next input request and answer each code request."""
    after = 0
    while True:
        message: NextInputRequestMessage = {"after": after}
        try:
            wait: InputRequestWait = await handle.execute_update(NEXT_INPUT_REQUEST_UPDATE, message)
        except (RPCError, WorkflowUpdateFailedError):
            # A workflow that refused its input at once takes no update: its result says why.
            await asyncio.wait([result], timeout=5)
            if result.done():
                return
            raise
        if wait["kind"] == "finished":
            return
        if wait["kind"] == "continued":
            continue  # The workflow continued as new while the update waited: ask its new run.
        request = wait["request"]
        after = request["sequence"]
        if not wait["open"] or request["answeredBy"] == "worker":
            continue  # Already over, or typed by the worker itself (the task names a TOTP secret).
        say(
            "input-requested",
            sequence=request["sequence"],
            kind=request["kind"],
            refusedCodes=request["refusedCodes"],
            executionId=request["executionId"],
        )
        if request["kind"] != "code":
            # An idle awaitable session wants more instructions: this service has none, so it ends it.
            await handle.signal(COMPLETE_SIGNAL)
            continue
        code: CodeMessage = {"code": await read_code()}
        await handle.signal(SUBMIT_CODE_SIGNAL, code)
        say("code-submitted", sequence=request["sequence"])


async def run(args: argparse.Namespace) -> int:
    client = await Client.connect(
        os.environ.get("TEMPORAL_ADDRESS", "localhost:7233"),
        namespace=os.environ.get("TEMPORAL_NAMESPACE", "default"),
        data_converter=data_converter_from_env(),
    )
    task: BrowserTaskInput = {
        "instructions": [{"action": args.instructions}],
        "type": "crawler_automation",
        "project": args.project,
        "geoLocation": {"country": args.country},
    }
    handle = await client.start_workflow(
        BROWSER_TASK,
        task,
        id=f"python-{uuid.uuid4()}",
        task_queue=os.environ.get("TEMPORAL_TASK_QUEUE", "browserai"),
    )
    say("started", workflowId=handle.id)
    result_task = asyncio.ensure_future(handle.result())
    try:
        await answer_input_requests(handle, result_task)
        result: BrowserTaskResult = await result_task
    except WorkflowFailureError as err:
        failure = err.cause
        if not isinstance(failure, ApplicationError):
            raise
        if failure.type == INVALID_INPUT:
            details: InvalidInputDetails = failure.details[0]
            say("failed", type=failure.type, problems=details["problems"])
            return 0
        if failure.type == BROWSER_AI_TASK_FAILED:
            outcome: BrowserTaskResult = failure.details[0]
            say("failed", type=failure.type, executionId=outcome["executionId"], error=outcome["error"])
            return 0
        say("failed", type=failure.type, message=failure.message)
        return 1
    say("completed", executionId=result["executionId"], status=result["status"], results=len(result["results"]))
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instructions", required=True)
    parser.add_argument("--project", default="example-project")
    parser.add_argument("--country", default="US")
    code = asyncio.run(run(parser.parse_args()))
    # The SDK's Rust runtime threads can still call into Python while the interpreter shuts down,
    # which now and then aborts the process at exit ("PyGILState_Release", temporalio/sdk-python#300):
    # everything is said, so leave without the interpreter's shutdown.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
