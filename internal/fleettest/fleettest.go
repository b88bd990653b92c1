// Package fleettest runs trivial jobs through the fleet's real queue code, for the
// tests and benchmarks of the queue itself: what is measured there is NATS and the
// fleet package, not a model. Its cells say "trivial job" and are never a model's.
package fleettest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/hwtest/hwtest/fleet"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// Payload is a trivial job: sleep, or kill the worker that runs it.
type Payload struct {
	SleepMS  int  `json:"sleep_ms,omitempty"`
	KillSelf bool `json:"kill_self,omitempty"` // SIGKILL the worker process: a poison job
}

// Encode is a job's payload.
func (p Payload) Encode() []byte {
	b, _ := json.Marshal(p)
	return b
}

// Exec runs trivial jobs: its cell passes with a check naming the worker's process.
func Exec(worker string) fleet.Executor {
	return func(ctx context.Context, j fleet.Job) ([]matrix.Cell, error) {
		var p Payload
		if len(j.Payload) > 0 {
			if err := json.Unmarshal(j.Payload, &p); err != nil {
				return nil, err
			}
		}
		if p.KillSelf {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // never returns
		}
		if p.SleepMS > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(p.SleepMS) * time.Millisecond):
			}
		}
		reason := fmt.Sprintf("trivial job run by %s (pid %d)", worker, os.Getpid())
		return []matrix.Cell{{Model: j.Model, Target: j.Target, Status: result.StatusPass,
			Checks: []matrix.CheckResult{{Name: "trivial", Status: result.StatusPass, Reason: reason}}}}, nil
	}
}
