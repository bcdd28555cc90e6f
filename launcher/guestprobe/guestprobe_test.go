package guestprobe

import (
	"context"
	"encoding/base64"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeAgent answers like qemu-ga: guest-exec starts PID 7, which exits
// with code after polls guest-exec-status calls (never when polls < 0).
type fakeAgent struct {
	code, polls int
	down        bool
	commands    []string
}

func (a *fakeAgent) AgentCommand(_, command string, _ time.Duration) (string, error) {
	a.commands = append(a.commands, command)
	if a.down {
		return "", errors.New("Guest agent is not responding")
	}
	switch {
	case strings.Contains(command, `"guest-ping"`):
		return `{"return":{}}`, nil
	case strings.Contains(command, `"guest-exec-status"`):
		if a.polls < 0 {
			return `{"return":{"exited":false}}`, nil
		}
		if a.polls > 0 {
			a.polls--
			return `{"return":{"exited":false}}`, nil
		}
		out := base64.StdEncoding.EncodeToString([]byte("hello\n"))
		return `{"return":{"exited":true,"exitcode":` + string(rune('0'+a.code)) + `,"out-data":"` + out + `"}}`, nil
	case strings.Contains(command, `"guest-exec"`):
		return `{"return":{"pid":7}}`, nil
	}
	return "", errors.New("unexpected " + command)
}

func TestRun(t *testing.T) {
	ctx := context.Background()
	if r := Run(ctx, &fakeAgent{}, "d", Request{Ping: true}); r.ExitCode != 0 {
		t.Errorf("ping: %+v", r)
	}
	if r := Run(ctx, &fakeAgent{down: true}, "d", Request{Ping: true}); r.ExitCode == 0 || !strings.Contains(r.Error, "not responding") {
		t.Errorf("ping of a silent agent: %+v", r)
	}
	a := &fakeAgent{polls: 2}
	if r := Run(ctx, a, "d", Request{Exec: []string{"cat", "/tmp/ok"}, TimeoutSeconds: 5}); r.ExitCode != 0 || r.Output != "hello\n" {
		t.Errorf("exec: %+v", r)
	}
	if !strings.Contains(a.commands[0], `"path":"cat"`) || !strings.Contains(a.commands[0], `"arg":["/tmp/ok"]`) || !strings.Contains(a.commands[0], `"capture-output":true`) {
		t.Errorf("guest-exec sent %s", a.commands[0])
	}
	if r := Run(ctx, &fakeAgent{code: 1}, "d", Request{Exec: []string{"false"}}); r.ExitCode != 1 {
		t.Errorf("a failing command: %+v", r)
	}
	start := time.Now()
	if r := Run(ctx, &fakeAgent{polls: -1}, "d", Request{Exec: []string{"sleep", "100"}, TimeoutSeconds: 1}); r.ExitCode == 0 || !strings.Contains(r.Error, "timeout") {
		t.Errorf("a command that does not exit: %+v", r)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the timeout of 1 s took %v", d)
	}
}

// TestServeProbe: the client's request reaches Run through the socket.
func TestServeProbe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sock := filepath.Join(t.TempDir(), "probe.sock")
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, sock, &fakeAgent{code: 3}, "d") }()
	var r Response
	var err error
	for range 50 {
		if r, err = Probe(ctx, sock, Request{Exec: []string{"x"}}); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil || r.ExitCode != 3 {
		t.Fatalf("Probe = %+v, %v; want exit code 3", r, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}
