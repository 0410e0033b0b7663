// A Go service that runs a BrowserAI task through browserai-temporal's workers.
//
// It starts `browserTask` by name on the workers' task queue and learns that the task needs a
// one-time code from the `nextInputRequest` update: one call per input request (one billed
// Temporal action, however long it waits; the workflow answers when BrowserAI asks). It reads the
// code from stdin (where a real service would take it from its user or an inbox), sends it with
// the `submitCode` signal, and asks again: BrowserAI may refuse the code and ask for another, which
// is a new request. At the end it prints the result, or the typed failure: `InvalidInput`
// (refused before anything was sent) or `BrowserAITaskFailed` (BrowserAI ran the task and it
// failed). Each step is one JSON line on stdout.
//
//	TEMPORAL_ADDRESS=localhost:7233 TEMPORAL_TASK_QUEUE=browserai \
//	  go run . -instructions "Log in to the portal and download the latest invoice"
//
// TEMPORAL_NAMESPACE picks the namespace; TEMPORAL_PAYLOAD_KEY (and _KEY_ID, _DECRYPT_KEYS)
// encrypts payloads with the key the workers use.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

func say(event string, fields map[string]any) {
	line := map[string]any{"event": event}
	for key, value := range fields {
		line[key] = value
	}
	text, _ := json.Marshal(line)
	fmt.Println(string(text))
}

func env(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}

// readCode is where your service gets the code: a user prompt, an SMS or e-mail inbox. Here: stdin.
func readCode(stdin *bufio.Reader) (string, error) {
	line, err := stdin.ReadString('\n')
	return strings.TrimSpace(line), err
}

// answerInputRequests waits for the task's next input request and answers each code request,
// until the task finishes. The workflow ID without a run ID: after a continue-as-new, the new run.
func answerInputRequests(ctx context.Context, c client.Client, workflowID string, done <-chan struct{}) error {
	stdin := bufio.NewReader(os.Stdin)
	var after int64
	for {
		wait, err := nextInputRequest(ctx, c, workflowID, after)
		if err != nil {
			// A workflow that refused its input at once takes no update: its result says why.
			select {
			case <-done:
				return nil
			case <-time.After(5 * time.Second):
				return err
			}
		}
		switch wait.Kind {
		case "finished":
			return nil
		case "continued":
			continue // The workflow continued as new while the update waited: ask its new run.
		}
		request := wait.Request
		after = request.Sequence
		if !wait.Open || request.AnsweredBy == "worker" {
			continue // Already over, or typed by the worker itself (the task names a TOTP secret).
		}
		say("input-requested", map[string]any{
			"sequence": request.Sequence, "kind": request.Kind, "refusedCodes": request.RefusedCodes, "executionId": request.ExecutionId,
		})
		if request.Kind != "code" {
			// An idle awaitable session wants more instructions: this service has none, so it ends it.
			if err := c.SignalWorkflow(ctx, workflowID, "", CompleteSignal, nil); err != nil {
				return err
			}
			continue
		}
		code, err := readCode(stdin)
		if err != nil {
			return err
		}
		if err := c.SignalWorkflow(ctx, workflowID, "", SubmitCodeSignal, CodeMessage{Code: code}); err != nil {
			return err
		}
		say("code-submitted", map[string]any{"sequence": request.Sequence})
	}
}

// nextInputRequest waits, in the workflow, for an input request numbered above `after`, or the end.
func nextInputRequest(ctx context.Context, c client.Client, workflowID string, after int64) (InputRequestWait, error) {
	var wait InputRequestWait
	update, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   workflowID,
		UpdateName:   NextInputRequestUpdate,
		Args:         []any{NextInputRequestMessage{After: after}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = update.Get(ctx, &wait)
	}
	return wait, err
}

func run(instructions, project, country string) (int, error) {
	dataConverter, err := DataConverterFromEnv()
	if err != nil {
		return 1, err
	}
	c, err := client.Dial(client.Options{
		HostPort:      env("TEMPORAL_ADDRESS", "localhost:7233"),
		Namespace:     env("TEMPORAL_NAMESPACE", "default"),
		DataConverter: dataConverter,
		// Failure details (the outcome so far) are payloads too: decoded with the same converter.
		FailureConverter: temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{DataConverter: dataConverter}),
	})
	if err != nil {
		return 1, err
	}
	defer c.Close()
	ctx := context.Background()
	input := BrowserTaskInput{
		Instructions: []Instruction{{Action: instructions}},
		Type:         "crawler_automation",
		Project:      project,
		GeoLocation:  GeoLocation{Country: country},
	}
	workflowRun, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        "go-" + uuid.NewString(),
		TaskQueue: env("TEMPORAL_TASK_QUEUE", "browserai"),
	}, BrowserTaskWorkflow, input)
	if err != nil {
		return 1, err
	}
	say("started", map[string]any{"workflowId": workflowRun.GetID()})

	var result BrowserTaskResult
	done := make(chan struct{})
	var resultErr error
	go func() {
		resultErr = workflowRun.Get(ctx, &result)
		close(done)
	}()
	if err := answerInputRequests(ctx, c, workflowRun.GetID(), done); err != nil {
		return 1, err
	}
	<-done // The task finished: its workflow's result follows.
	if resultErr != nil {
		var failure *temporal.ApplicationError
		if !errors.As(resultErr, &failure) {
			return 1, resultErr
		}
		switch failure.Type() {
		case InvalidInput:
			var details InvalidInputDetails
			if err := failure.Details(&details); err != nil {
				return 1, err
			}
			say("failed", map[string]any{"type": failure.Type(), "problems": details.Problems})
			return 0, nil
		case BrowserAITaskFailed:
			var outcome BrowserTaskResult
			if err := failure.Details(&outcome); err != nil {
				return 1, err
			}
			say("failed", map[string]any{"type": failure.Type(), "executionId": outcome.ExecutionId, "error": outcome.Error})
			return 0, nil
		}
		say("failed", map[string]any{"type": failure.Type(), "message": failure.Message()})
		return 1, nil
	}
	say("completed", map[string]any{"executionId": result.ExecutionId, "status": result.Status, "results": len(result.Results)})
	return 0, nil
}

func main() {
	instructions := flag.String("instructions", "", "what the browser should do (required)")
	project := flag.String("project", "example-project", "BrowserAI project")
	country := flag.String("country", "US", "ISO 3166-1 alpha-2 country the browser runs from")
	flag.Parse()
	if *instructions == "" {
		flag.Usage()
		os.Exit(2)
	}
	code, err := run(*instructions, *project, *country)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}
