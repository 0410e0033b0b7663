package main

// The browserai-temporal contract, in Go types: hand-written from the package's JSON Schemas
// (browserai-temporal/schemas/*.json, the repository's schemas/); contract_test.go fails when a
// type here and its schema disagree. Optional fields carry `omitempty`: the workflow refuses
// null for a field it does not require, so leave them out rather than sending zero pointers.

// Names of the workflow, its messages and failure types: stable, part of the public API.
const (
	BrowserTaskWorkflow      = "browserTask"
	RunSavedTaskWorkflow     = "runSavedTask"
	SubmitCodeSignal         = "submitCode"
	AppendInstructionsSignal = "appendInstructions"
	CompleteSignal           = "complete"
	StateQuery               = "state"
	NextInputRequestUpdate   = "nextInputRequest"
	InvalidInput             = "InvalidInput"
	BrowserAITaskFailed      = "BrowserAITaskFailed"
)

type Instruction struct {
	Action string `json:"action"`
	Type   string `json:"type,omitempty"`
}

type GeoLocation struct {
	Country string `json:"country"`
	City    string `json:"city,omitempty"`
	Zipcode string `json:"zipcode,omitempty"`
}

type PollingOptions struct {
	InitialIntervalMs  int64 `json:"initialIntervalMs,omitempty"`
	MaxIntervalMs      int64 `json:"maxIntervalMs,omitempty"`
	HeartbeatTimeoutMs int64 `json:"heartbeatTimeoutMs,omitempty"`
	TargetDetectionMs  int64 `json:"targetDetectionMs,omitempty"`
	MaxSpanMs          int64 `json:"maxSpanMs,omitempty"`
	// A pointer: 0 is a valid setting, and omitempty would drop it.
	InputSettleMs   *int64 `json:"inputSettleMs,omitempty"`
	NotFoundGraceMs int64  `json:"notFoundGraceMs,omitempty"`
}

type RetryPacing struct {
	InitialIntervalMs  int64   `json:"initialIntervalMs,omitempty"`
	MaximumIntervalMs  int64   `json:"maximumIntervalMs,omitempty"`
	BackoffCoefficient float64 `json:"backoffCoefficient,omitempty"`
}

type TaskActivityOptions struct {
	TaskQueue      string       `json:"taskQueue,omitempty"`
	PriorityKey    int          `json:"priorityKey,omitempty"`
	FairnessKey    string       `json:"fairnessKey,omitempty"`
	FairnessWeight float64      `json:"fairnessWeight,omitempty"`
	Retry          *RetryPacing `json:"retry,omitempty"`
}

type TaskWebhookOptions struct {
	// Any of "input.requested", "task.finished", "task.stop_not_confirmed"; nil: all of them.
	Events    []string `json:"events,omitempty"`
	Reference string   `json:"reference,omitempty"`
}

type BrowserTaskInput struct {
	Instructions            []Instruction        `json:"instructions"`
	Type                    string               `json:"type"`
	Project                 string               `json:"project"`
	GeoLocation             GeoLocation          `json:"geoLocation"`
	Inspect                 *bool                `json:"inspect,omitempty"`
	Awaitable               *bool                `json:"awaitable,omitempty"`
	Polling                 *PollingOptions      `json:"polling,omitempty"`
	TimeoutMs               int64                `json:"timeoutMs,omitempty"`
	AwaitingInputTimeoutMs  int64                `json:"awaitingInputTimeoutMs,omitempty"`
	CodeInstructionTemplate string               `json:"codeInstructionTemplate,omitempty"`
	Delivery                string               `json:"delivery,omitempty"`
	MaxResultBytes          int64                `json:"maxResultBytes,omitempty"`
	StopRetryWindowMs       int64                `json:"stopRetryWindowMs,omitempty"`
	ActivityOptions         *TaskActivityOptions `json:"activityOptions,omitempty"`
	// A workflow ID (string), or false to notify nobody.
	NotifyWorkflowId any                 `json:"notifyWorkflowId,omitempty"`
	TotpSecretName   string              `json:"totpSecretName,omitempty"`
	CodeRecipient    *CodeRecipient      `json:"codeRecipient,omitempty"`
	MaxCodeAttempts  int                 `json:"maxCodeAttempts,omitempty"`
	Webhook          *TaskWebhookOptions `json:"webhook,omitempty"`
	Priority         int                 `json:"priority,omitempty"`
	FairnessKey      string              `json:"fairnessKey,omitempty"`
	FairnessWeight   float64             `json:"fairnessWeight,omitempty"`
}

// Where the task's one-time codes arrive by SMS or email, for the inbox to type them.
type CodeRecipient struct {
	Address string   `json:"address"` // E.164 phone number or email address
	Senders []string `json:"senders,omitempty"`
}

type CodeMessage struct {
	Code  string `json:"code"`
	Force bool   `json:"force,omitempty"`
}

type NextInputRequestMessage struct {
	// The sequence number of the last request seen; 0 (left out): any request.
	After int64 `json:"after,omitempty"`
	// How long the update waits at most before it answers "continued"; 0 (left out): 5 minutes.
	WaitMs int64 `json:"waitMs,omitempty"`
}

type InputRequest struct {
	Sequence     int64  `json:"sequence"`
	Kind         string `json:"kind"`       // "code" or "instructions"
	AnsweredBy   string `json:"answeredBy"` // "caller" or "worker"
	Prompt       string `json:"prompt"`
	RefusedCodes int64  `json:"refusedCodes"`
	AttemptsLeft int64  `json:"attemptsLeft,omitempty"`
	Since        string `json:"since"`
	TimesOutAt   string `json:"timesOutAt"`
	WorkflowId   string `json:"workflowId"`
	ExecutionId  string `json:"executionId"`
	Project      string `json:"project"`
	// A task with a codeRecipient: where the inbox waits for the code, masked.
	CodeRecipient string `json:"codeRecipient,omitempty"`
}

type TaskFinished struct {
	Outcome       string  `json:"outcome"` // "completed", "failed", "cancelled" or "timed_out"
	WorkflowId    string  `json:"workflowId"`
	ExecutionId   *string `json:"executionId"`
	Status        string  `json:"status"`
	FailureType   string  `json:"failureType,omitempty"`
	StopConfirmed *bool   `json:"stopConfirmed,omitempty"`
}

// InputRequestWait is the answer of the nextInputRequest update, one of three kinds: Request and
// Open are set for "input-requested", Finished for "finished", nothing more for "continued".
type InputRequestWait struct {
	Kind     string        `json:"kind"`
	Request  *InputRequest `json:"request,omitempty"`
	Open     bool          `json:"open,omitempty"`
	Finished *TaskFinished `json:"finished,omitempty"`
}

type TrimReport struct {
	OriginalBytes   int64  `json:"originalBytes"`
	KeptBytes       int64  `json:"keptBytes"`
	TruncatedFields int64  `json:"truncatedFields"`
	DroppedEntries  int64  `json:"droppedEntries"`
	Note            string `json:"note"`
}

type BrowserTaskResult struct {
	ExecutionId   string           `json:"executionId"`
	Status        string           `json:"status"`
	Started       *string          `json:"started"`
	Completed     *string          `json:"completed"`
	Result        any              `json:"result"`
	Error         *string          `json:"error"`
	Results       []map[string]any `json:"results"`
	Trimmed       *TrimReport      `json:"trimmed,omitempty"`
	StopConfirmed *bool            `json:"stopConfirmed,omitempty"`
}

type TaskProgress struct {
	Status string   `json:"status,omitempty"`
	Logs   []string `json:"logs"`
}

type BrowserTaskState struct {
	ExecutionId         *string            `json:"executionId"`
	Status              string             `json:"status"`
	AwaitingInput       bool               `json:"awaitingInput"`
	Progress            TaskProgress       `json:"progress"`
	Started             *string            `json:"started"`
	EstimatedCompletion *string            `json:"estimatedCompletion"`
	PendingInstructions int64              `json:"pendingInstructions"`
	Error               *string            `json:"error"`
	Outcome             *BrowserTaskResult `json:"outcome"`
	StopConfirmed       *bool              `json:"stopConfirmed"`
	InputRequest        *InputRequest      `json:"inputRequest"`
	// A task with a codeRecipient: where its codes arrive (masked) and its latest inbox messages.
	Inbox *InboxView `json:"inbox,omitempty"`
	// Under a fleet limit: {"held": true}, or {"held": false, "waitingSince": ..., "positionWhenQueued": ...}.
	FleetSlot map[string]any `json:"fleetSlot,omitempty"`
}

type InboxView struct {
	Recipient string       `json:"recipient"`
	Events    []InboxEvent `json:"events"`
}

// A message the inbox brought the task: "matched" (its code typed once) or "refused", and why.
type InboxEvent struct {
	At      string `json:"at"`
	From    string `json:"from"` // the sender, masked
	Outcome string `json:"outcome"`
	Reason  string `json:"reason"`
}

type InvalidInputDetails struct {
	Problems []string `json:"problems"`
}
