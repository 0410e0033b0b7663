"""The browserai-temporal contract, in Python types.

Hand-written from the package's JSON Schemas (``browserai-temporal/schemas/*.json``, also in
the repository's ``schemas/``); ``test_contract.py`` fails when a type here and its schema
disagree (a field added, dropped, made optional or retyped). Optional fields are
``NotRequired``: leave them out rather than sending ``None``, which the workflow refuses.
"""

from typing import Any, Literal, NotRequired, TypedDict

# Names of the workflow, its messages and failure types: stable, part of the public API.
BROWSER_TASK = "browserTask"
RUN_SAVED_TASK = "runSavedTask"
SUBMIT_CODE_SIGNAL = "submitCode"
APPEND_INSTRUCTIONS_SIGNAL = "appendInstructions"
COMPLETE_SIGNAL = "complete"
STATE_QUERY = "state"
NEXT_INPUT_REQUEST_UPDATE = "nextInputRequest"
INVALID_INPUT = "InvalidInput"
BROWSER_AI_TASK_FAILED = "BrowserAITaskFailed"


class Instruction(TypedDict):
    action: str
    type: NotRequired[str]


class GeoLocation(TypedDict):
    country: str
    city: NotRequired[str]
    zipcode: NotRequired[str]


class PollingOptions(TypedDict, total=False):
    initialIntervalMs: int
    maxIntervalMs: int
    heartbeatTimeoutMs: int
    targetDetectionMs: int
    maxSpanMs: int
    inputSettleMs: int
    notFoundGraceMs: int


class RetryPacing(TypedDict, total=False):
    initialIntervalMs: int
    maximumIntervalMs: int
    backoffCoefficient: float


class TaskActivityOptions(TypedDict, total=False):
    taskQueue: str
    priorityKey: int
    fairnessKey: str
    fairnessWeight: float
    retry: RetryPacing


class TaskWebhookOptions(TypedDict, total=False):
    events: list[Literal["input.requested", "task.finished", "task.stop_not_confirmed"]]
    reference: str


class CodeRecipient(TypedDict):
    # A phone number in E.164 or an email address: where the site sends the task's codes (the inbox).
    address: str
    senders: NotRequired[list[str]]


class BrowserTaskInput(TypedDict):
    instructions: list[Instruction]
    type: Literal["crawler_automation", "script_automation"]
    project: str
    geoLocation: GeoLocation
    inspect: NotRequired[bool]
    awaitable: NotRequired[bool]
    polling: NotRequired[PollingOptions]
    timeoutMs: NotRequired[int]
    awaitingInputTimeoutMs: NotRequired[int]
    codeInstructionTemplate: NotRequired[str]
    delivery: NotRequired[Literal["at-most-once", "at-least-once"]]
    maxResultBytes: NotRequired[int]
    stopRetryWindowMs: NotRequired[int]
    activityOptions: NotRequired[TaskActivityOptions]
    notifyWorkflowId: NotRequired[str | Literal[False]]
    totpSecretName: NotRequired[str]
    codeRecipient: NotRequired[CodeRecipient]
    maxCodeAttempts: NotRequired[int]
    webhook: NotRequired[TaskWebhookOptions]
    priority: NotRequired[int]
    fairnessKey: NotRequired[str]
    fairnessWeight: NotRequired[float]


class CodeMessage(TypedDict):
    code: str
    force: NotRequired[bool]


class NextInputRequestMessage(TypedDict, total=False):
    after: int
    waitMs: int


class InputRequest(TypedDict):
    sequence: int
    kind: Literal["code", "instructions"]
    answeredBy: Literal["caller", "worker"]
    prompt: str
    refusedCodes: int
    attemptsLeft: NotRequired[int]
    since: str
    timesOutAt: str
    workflowId: str
    executionId: str
    project: str
    # A task with a codeRecipient: where the inbox waits for the code, masked.
    codeRecipient: NotRequired[str]


class TaskFinished(TypedDict):
    outcome: Literal["completed", "failed", "cancelled", "timed_out"]
    workflowId: str
    executionId: str | None
    status: str
    failureType: NotRequired[str]
    stopConfirmed: NotRequired[bool]


class InputRequested(TypedDict):
    kind: Literal["input-requested"]
    request: InputRequest
    open: bool


class Finished(TypedDict):
    kind: Literal["finished"]
    finished: TaskFinished


class Continued(TypedDict):
    kind: Literal["continued"]


# The answer of the nextInputRequest update: tell them apart by "kind".
InputRequestWait = InputRequested | Finished | Continued


class TrimReport(TypedDict):
    originalBytes: int
    keptBytes: int
    truncatedFields: int
    droppedEntries: int
    note: str


class BrowserTaskResult(TypedDict):
    executionId: str
    status: str
    started: str | None
    completed: str | None
    result: Any
    error: str | None
    results: list[dict[str, Any]]
    trimmed: NotRequired[TrimReport]
    stopConfirmed: NotRequired[bool]


class TaskProgress(TypedDict):
    status: NotRequired[str]
    logs: list[str]


# A message the inbox brought the task: matched (its code typed once) or refused, and why. `from`
# (the sender, masked) is a Python keyword, hence the functional form.
InboxEvent = TypedDict(
    "InboxEvent", {"at": str, "from": str, "outcome": Literal["matched", "refused"], "reason": str}
)


class InboxView(TypedDict):
    recipient: str
    events: list[InboxEvent]


class BrowserTaskState(TypedDict):
    executionId: str | None
    status: str
    awaitingInput: bool
    progress: TaskProgress
    started: str | None
    estimatedCompletion: str | None
    pendingInstructions: int
    error: str | None
    outcome: BrowserTaskResult | None
    stopConfirmed: bool | None
    inputRequest: InputRequest | None
    # A task with a codeRecipient: where its codes arrive (masked) and its latest inbox messages.
    inbox: NotRequired[InboxView]
    # Under a fleet limit: {"held": true}, or {"held": false, "waitingSince": ..., "positionWhenQueued": ...}.
    fleetSlot: NotRequired[dict[str, object]]


class InvalidInputDetails(TypedDict):
    problems: list[str]


# Where each type's schema is: (schema file, JSON pointer inside it).
SCHEMA_OF: dict[type, tuple[str, str]] = {
    BrowserTaskInput: ("browser-task-input.schema.json", "/$defs/BrowserTaskInput"),
    Instruction: ("browser-task-input.schema.json", "/$defs/Instruction"),
    GeoLocation: ("browser-task-input.schema.json", "/$defs/GeoLocation"),
    PollingOptions: ("browser-task-input.schema.json", "/$defs/PollingOptions"),
    TaskActivityOptions: ("browser-task-input.schema.json", "/$defs/TaskActivityOptions"),
    RetryPacing: ("browser-task-input.schema.json", "/$defs/TaskActivityOptions/properties/retry"),
    TaskWebhookOptions: ("browser-task-input.schema.json", "/$defs/TaskWebhookOptions"),
    CodeRecipient: ("browser-task-input.schema.json", "/$defs/CodeRecipient"),
    CodeMessage: ("code-message.schema.json", "/$defs/CodeMessage"),
    NextInputRequestMessage: ("next-input-request-message.schema.json", "/$defs/NextInputRequestMessage"),
    InputRequest: ("input-request.schema.json", "/$defs/InputRequest"),
    TaskFinished: ("task-finished.schema.json", "/$defs/TaskFinished"),
    InputRequested: ("input-request-wait.schema.json", "/$defs/InputRequestWait/anyOf/0"),
    Finished: ("input-request-wait.schema.json", "/$defs/InputRequestWait/anyOf/1"),
    Continued: ("input-request-wait.schema.json", "/$defs/InputRequestWait/anyOf/2"),
    BrowserTaskResult: ("browser-task-result.schema.json", "/$defs/BrowserTaskResult"),
    TrimReport: ("browser-task-result.schema.json", "/$defs/TrimReport"),
    BrowserTaskState: ("browser-task-state.schema.json", "/$defs/BrowserTaskState"),
    TaskProgress: ("browser-task-state.schema.json", "/$defs/BrowserTaskState/properties/progress"),
    InboxView: ("browser-task-state.schema.json", "/$defs/InboxView"),
    InboxEvent: ("browser-task-state.schema.json", "/$defs/InboxEvent"),
    InvalidInputDetails: ("workflow-failure.schema.json", "/$defs/InvalidInputDetails"),
}

# Each union with the schema that lists its members (anyOf): one type per member, in order.
UNION_OF: dict[object, tuple[str, str]] = {
    InputRequestWait: ("input-request-wait.schema.json", "/$defs/InputRequestWait"),
}
